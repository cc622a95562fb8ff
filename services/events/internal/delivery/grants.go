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
// and keeps each for TTL, so a burst of deliveries asks once. A revocation
// stops deliveries as soon as identity's list of grant changes names it
// (grantchanges.Follower drops the grant), and within TTL in any case.
type Grants struct {
	IdentityURL string
	Keys        *internalctx.Keyring
	Client      *http.Client
	TTL         time.Duration

	mu    sync.Mutex
	cache map[string]cachedGrant
	// forgets counts the Forget calls: a read that overlapped one may hold
	// what was just dropped, so it is not kept.
	forgets uint64
}

// ForgetGrant drops a cached grant.
func (s *Grants) ForgetGrant(id string) {
	s.mu.Lock()
	s.forgets++
	delete(s.cache, id)
	s.mu.Unlock()
}

// ForgetClient drops every cached grant of a client.
func (s *Grants) ForgetClient(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgets++
	for k, c := range s.cache {
		if c.g != nil && c.g.ClientID == id {
			delete(s.cache, k)
		}
	}
}

// ForgetAll drops every cached grant.
func (s *Grants) ForgetAll() {
	s.mu.Lock()
	s.forgets++
	clear(s.cache)
	s.mu.Unlock()
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
	forgets := s.forgets
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
	if s.forgets == forgets {
		s.cache[grantID] = cachedGrant{g: out, expires: now.Add(s.TTL)}
	}
	s.mu.Unlock()
	return out, nil
}
