// Package grants reads an owner's approval (the grant behind an access token)
// from the identity service and keeps it for a few seconds, so requests need
// no call to identity. A revocation drops the grant at once when identity's
// list of grant changes says so (grantchanges.Follower), and within the
// cache lifetime in any case.
package grants

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/contracts"
)

// Restaurant is one restaurant a grant covers, with its tenant settings.
type Restaurant = contracts.GrantRestaurant

// Organization is one organization an organization-boundary grant covers.
type Organization = contracts.GrantOrganization

// Grant is identity's answer for GET /internal/v1/grants/{grantId}, indexed
// for the lookups every request makes.
type Grant struct {
	contracts.Grant

	restaurants map[string]*Restaurant
	revoked     map[string]bool
}

// UnmarshalJSON decodes identity's answer and indexes it for the lookups
// made on every request.
func (g *Grant) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &g.Grant); err != nil {
		return err
	}
	g.restaurants = make(map[string]*Restaurant, len(g.Restaurants))
	for i := range g.Restaurants {
		g.restaurants[strings.ToLower(g.Restaurants[i].RestaurantID)] = &g.Restaurants[i]
	}
	g.revoked = make(map[string]bool, len(g.RevokedTokenIDs)+len(g.RevokedTokenFamilies))
	for _, id := range g.RevokedTokenIDs {
		g.revoked["jti:"+id] = true
	}
	for _, f := range g.RevokedTokenFamilies {
		g.revoked["fid:"+f] = true
	}
	return nil
}

// Usable reports whether the grant still authorizes requests at now.
func (g *Grant) Usable(now time.Time) bool {
	return g.Status == "active" && g.ClientStatus == "approved" && now.Before(g.ExpiresAt)
}

// Revokes reports whether identity revoked the access token with id (jti)
// in family (fid).
func (g *Grant) Revokes(id, family string) bool {
	return id != "" && g.revoked["jti:"+id] || family != "" && g.revoked["fid:"+family]
}

// HasScope reports whether the owner approved scope.
func (g *Grant) HasScope(s string) bool {
	for _, x := range g.Scopes {
		if x == s {
			return true
		}
	}
	return false
}

// Restaurant returns the covered restaurant with id, or nil.
func (g *Grant) Restaurant(id string) *Restaurant { return g.restaurants[strings.ToLower(id)] }

// Organization returns the covered organization with id, or nil.
func (g *Grant) Organization(id string) *Organization {
	for i := range g.Organizations {
		if strings.EqualFold(g.Organizations[i].OrganizationID, id) {
			return &g.Organizations[i]
		}
	}
	return nil
}

// ErrNotFound means identity does not know the grant.
var ErrNotFound = internalctx.ErrNotFound

// ErrUnavailable means identity could not be asked.
var ErrUnavailable = internalctx.ErrUnavailable

// Caller is who asks identity, for its internal context.
type Caller struct {
	ClientID, UserID, GrantID, RequestID string
}

// Store fetches and caches grants.
type Store struct {
	base        string
	keys        *internalctx.Keyring
	client      *http.Client
	ttl, negTTL time.Duration
	now         func() time.Time

	mu      sync.Mutex
	entries map[string]entry
	flight  singleflight.Group
	// forgets counts the Forget calls: a fetch that overlapped one may
	// hold what was just dropped, so it is not kept.
	forgets atomic.Uint64
}

type entry struct {
	grant   *Grant // nil: identity said 404
	expires time.Time
}

// NewStore returns a store asking identityURL.
func NewStore(identityURL string, keys *internalctx.Keyring, client *http.Client, ttl, negTTL time.Duration) *Store {
	return &Store{base: identityURL, keys: keys, client: client, ttl: ttl, negTTL: negTTL, now: time.Now, entries: map[string]entry{}}
}

// maxEntries bounds the cache; beyond it expired entries are swept.
const maxEntries = 50_000

// Get returns the grant, from cache when fresh.
func (s *Store) Get(ctx context.Context, who Caller) (*Grant, error) {
	now := s.now()
	s.mu.Lock()
	e, ok := s.entries[who.GrantID]
	s.mu.Unlock()
	if ok && now.Before(e.expires) {
		if e.grant == nil {
			return nil, ErrNotFound
		}
		return e.grant, nil
	}
	// Concurrent misses for one grant share a single call to identity.
	forgets := s.forgets.Load()
	v, err, _ := s.flight.Do(who.GrantID, func() (any, error) { return s.fetch(context.WithoutCancel(ctx), who) })
	g, _ := v.(*Grant)
	switch {
	case s.forgets.Load() != forgets:
	case errors.Is(err, ErrNotFound):
		s.put(who.GrantID, entry{expires: now.Add(s.negTTL)}, now)
	case err == nil:
		s.put(who.GrantID, entry{grant: g, expires: now.Add(s.ttl)}, now)
	}
	return g, err
}

// ForgetGrant drops a cached grant: the next request asks identity.
func (s *Store) ForgetGrant(id string) {
	s.forgets.Add(1)
	s.mu.Lock()
	delete(s.entries, id)
	s.mu.Unlock()
}

// ForgetClient drops every cached grant of a client.
func (s *Store) ForgetClient(id string) {
	s.forgets.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, e := range s.entries {
		if e.grant != nil && e.grant.ClientID == id {
			delete(s.entries, k)
		}
	}
}

// ForgetAll drops every cached grant.
func (s *Store) ForgetAll() {
	s.forgets.Add(1)
	s.mu.Lock()
	clear(s.entries)
	s.mu.Unlock()
}

func (s *Store) put(id string, e entry, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.entries) >= maxEntries {
		for k, v := range s.entries {
			if !now.Before(v.expires) || len(s.entries) >= maxEntries {
				delete(s.entries, k)
			}
		}
	}
	s.entries[id] = e
}

func (s *Store) fetch(ctx context.Context, who Caller) (*Grant, error) {
	var g Grant
	err := internalctx.GetJSON(ctx, s.client, s.keys, s.base+"/internal/v1/grants/"+url.PathEscape(who.GrantID),
		internalctx.Context{ClientID: who.ClientID, UserID: who.UserID, GrantID: who.GrantID, RequestID: who.RequestID}, &g)
	if err != nil {
		return nil, err
	}
	return &g, nil
}
