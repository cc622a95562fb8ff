package server_test

import (
	"context"
	"testing"
	"time"
)

// TestGrantUseReachesIdentity holds the gateway's record of use: a request
// a grant authorizes is recorded to the minute and sent to identity by the
// next send, a refused one is not, and a send identity refuses is kept for
// the next.
func TestGrantUseReachesIdentity(t *testing.T) {
	e := newEnv(t)
	g := e.start(nil, "")
	e.id.setGrant(restaurantGrant("g-unused", "svc.orders.read"))
	before := time.Now().UTC().Truncate(time.Minute)
	if r := g.do(t, "GET", "/v1/restaurants", e.id.token(t, tokenOpts{gid: "g-rest"}), nil); r.status != 200 {
		t.Fatalf("authorized call: %d %s", r.status, r.body)
	}
	if r := g.do(t, "GET", "/v1/restaurants", e.id.token(t, tokenOpts{gid: "g-unused"}), nil); r.status != 403 {
		t.Fatalf("call outside the grant's scopes: %d %s", r.status, r.body)
	}
	sent := func() map[string]time.Time {
		e.id.mu.Lock()
		defer e.id.mu.Unlock()
		out := map[string]time.Time{}
		for k, v := range e.id.uses {
			out[k] = v
		}
		return out
	}
	e.id.mu.Lock()
	e.id.down = true
	e.id.mu.Unlock()
	if err := g.g.Usage().Send(context.Background()); err == nil {
		t.Fatal("a send identity refused reported success")
	}
	if got := sent(); len(got) != 0 {
		t.Fatalf("recorded while identity was down: %v", got)
	}
	e.id.mu.Lock()
	e.id.down = false
	e.id.mu.Unlock()
	if err := g.g.Usage().Send(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := sent()
	at, ok := got["g-rest"]
	if !ok || at.Before(before) || at.After(time.Now()) || !at.Equal(at.Truncate(time.Minute)) {
		t.Errorf("use of g-rest: %v (sent %v)", at, got)
	}
	if _, ok := got["g-unused"]; ok {
		t.Errorf("a refused call was recorded as use: %v", got)
	}
	e.id.mu.Lock()
	clear(e.id.uses)
	e.id.mu.Unlock()
	if err := g.g.Usage().Send(context.Background()); err != nil || len(sent()) != 0 {
		t.Errorf("a second send without new use sent %v (%v)", sent(), err)
	}
}
