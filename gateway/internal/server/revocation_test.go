package server_test

import (
	"strings"
	"testing"
	"time"
)

// TestRevokedAccessTokensAnswer401 holds the gateway to identity's list of
// revoked token families and token ids: a listed token is refused within
// the grant cache's lifetime, with the bearer challenge, on every operation
// (including those identity serves itself); other tokens of the grant go on.
func TestRevokedAccessTokensAnswer401(t *testing.T) {
	e := newEnv(t)
	e.vars["GRANT_CACHE_TTL"] = "200ms"
	g := e.start(nil, "")
	const gid = "g-revocations"
	e.id.setGrant(restaurantGrant(gid))
	familyTok := e.id.token(t, tokenOpts{gid: gid, fid: "family-1", jti: "jti-1"})
	idTok := e.id.token(t, tokenOpts{gid: gid, fid: "family-2", jti: "jti-2"})
	otherTok := e.id.token(t, tokenOpts{gid: gid, fid: "family-3", jti: "jti-3"})
	legacyTok := e.id.token(t, tokenOpts{gid: gid, jti: "jti-4"}) // no fid claim
	paths := []string{"/v1/restaurants", "/v1/organizations", "/v1/restaurants/" + restA + "/orders"}
	for _, tok := range []string{familyTok, idTok, otherTok, legacyTok} {
		if r := g.do(t, "GET", paths[0], tok, nil); r.status != 200 {
			t.Fatalf("before revocation: %d %s", r.status, r.body)
		}
	}

	gr := restaurantGrant(gid)
	gr.RevokedTokenFamilies = []string{"family-1"}
	gr.RevokedTokenIDs = []string{"jti-2", "jti-4"}
	e.id.setGrant(gr)
	// The cached grant still answers until GRANT_CACHE_TTL has passed.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && g.do(t, "GET", paths[0], familyTok, nil).status == 200 {
		time.Sleep(50 * time.Millisecond)
	}
	for _, tok := range []string{familyTok, idTok, legacyTok} {
		for _, p := range paths {
			r := g.do(t, "GET", p, tok, nil)
			if r.status != 401 || r.code() != "invalid_token" || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), `Bearer error="invalid_token"`) ||
				!strings.Contains(r.header.Get("WWW-Authenticate"), "revoked") {
				t.Errorf("%s with a revoked token: %d %s %q", p, r.status, r.body, r.header.Get("WWW-Authenticate"))
			}
		}
	}
	for _, p := range paths {
		if r := g.do(t, "GET", p, otherTok, nil); r.status != 200 {
			t.Errorf("%s with a token that was not revoked: %d %s", p, r.status, r.body)
		}
	}
}
