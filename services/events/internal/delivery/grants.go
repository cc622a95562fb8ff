package delivery

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/contracts"
)

// Grants reads grants from identity's internal API (contracts.GrantPath)
// and keeps each for TTL, so a burst of deliveries asks once and a
// revocation stops deliveries within TTL.
type Grants struct {
	IdentityURL string
	Keys        *internalctx.Keyring
	Client      *http.Client
	TTL         time.Duration

	mu    sync.Mutex
	cache map[string]cachedGrant
}

type cachedGrant struct {
	g       *contracts.Grant
	expires time.Time
}

// Get returns the grant, nil when identity does not know it, or an error
// when identity cannot be asked.
func (s *Grants) Get(ctx context.Context, grantID, clientID string) (*contracts.Grant, error) {
	now := time.Now()
	s.mu.Lock()
	c, ok := s.cache[grantID]
	s.mu.Unlock()
	if ok && now.Before(c.expires) {
		return c.g, nil
	}
	var g contracts.Grant
	path := strings.Replace(contracts.GrantPath, "{grantId}", url.PathEscape(grantID), 1)
	err := internalctx.GetJSON(ctx, s.Client, s.Keys, strings.TrimSuffix(s.IdentityURL, "/")+path,
		internalctx.Context{ClientID: clientID, GrantID: grantID}, &g)
	var out *contracts.Grant
	switch {
	case errors.Is(err, internalctx.ErrNotFound):
	case err != nil:
		return nil, err
	default:
		out = &g
	}
	s.mu.Lock()
	if s.cache == nil || len(s.cache) > 10_000 {
		s.cache = map[string]cachedGrant{}
	}
	s.cache[grantID] = cachedGrant{g: out, expires: now.Add(s.TTL)}
	s.mu.Unlock()
	return out, nil
}
