package server_test

import (
	"net/http"
	"slices"
	"testing"

	"partnerapi.dev/services/contracts"
)

const ordersRead = "svc.orders.read"

// grantView is identity's answer to the gateway and the events service
// (contracts.Grant): what an existing authorization allows now.
func (e *env) grantView(t *testing.T, gid string) contracts.Grant {
	t.Helper()
	var g contracts.Grant
	if st := e.partner(t, "/internal/v1/grants/"+gid, gid, &g); st != http.StatusOK {
		t.Fatalf("grant view: %d", st)
	}
	return g
}

// TestRemovingAClientScopeNarrowsExistingGrants: a scope removed from a
// client's allowedScopes leaves every existing grant of that client (so the
// gateway refuses its operations and webhooks of its events stop within
// GRANT_CACHE_TTL); given back, it applies again to the grants whose owner
// approved it.
func TestRemovingAClientScopeNarrowsExistingGrants(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := e.opts("conf-partner")
	o.Restaurant = restA
	o.Scope = "svc.restaurant.read " + ordersRead
	_, tok := e.approve(t, o)
	gid := grantID(t, tok.AccessToken)
	if g := e.grantView(t, gid); !slices.Contains(g.Scopes, ordersRead) {
		t.Fatalf("grant lacks %s before: %v", ordersRead, g.Scopes)
	}
	narrowed := slices.DeleteFunc(slices.Clone(allScopes), func(s string) bool { return s == ordersRead })
	if st := e.admin(t, http.MethodPatch, "/admin/v1/clients/conf-partner", map[string]any{"allowedScopes": narrowed}, nil); st != http.StatusOK {
		t.Fatalf("update client: %d", st)
	}
	g := e.grantView(t, gid)
	if slices.Contains(g.Scopes, ordersRead) || !slices.Contains(g.Scopes, "svc.restaurant.read") || g.Status != "active" {
		t.Fatalf("after removing %s from the client: %s %v", ordersRead, g.Status, g.Scopes)
	}
	var admin struct {
		Data struct{ Scopes []string } `json:"data"`
	}
	e.admin(t, http.MethodGet, "/admin/v1/grants/"+gid, nil, &admin)
	if slices.Contains(admin.Data.Scopes, ordersRead) {
		t.Fatalf("the admin view still lists the removed scope: %v", admin.Data.Scopes)
	}
	if st := e.admin(t, http.MethodPatch, "/admin/v1/clients/conf-partner", map[string]any{"allowedScopes": allScopes}, nil); st != http.StatusOK {
		t.Fatalf("update client: %d", st)
	}
	if g := e.grantView(t, gid); !slices.Contains(g.Scopes, ordersRead) {
		t.Fatalf("the scope given back to the client does not apply again: %v", g.Scopes)
	}
}

// TestRevokingTheRefreshTokenEndsTheAuthorization: RFC 7009 revocation of
// a refresh token (a partner's uninstall) revokes the grant, so the gateway
// refuses its tokens and the events service stops its webhooks; revoking
// only an access token leaves the grant.
func TestRevokingTheRefreshTokenEndsTheAuthorization(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, client := range []string{"demo-partner", "conf-partner"} {
		o := e.opts(client)
		o.Restaurant = restA
		_, tok := e.approve(t, o)
		gid := grantID(t, tok.AccessToken)
		e.revoke(t, o, tok.AccessToken, "access_token")
		if g := e.grantView(t, gid); g.Status != "active" {
			t.Fatalf("%s: revoking an access token ended the grant: %s", client, g.Status)
		}
		// Another client cannot end this authorization with its token.
		e.revoke(t, e.opts(map[string]string{"demo-partner": "conf-partner", "conf-partner": "demo-partner"}[client]), tok.RefreshToken, "refresh_token")
		if g := e.grantView(t, gid); g.Status != "active" {
			t.Fatalf("%s: another client's revocation ended the grant: %s", client, g.Status)
		}
		e.revoke(t, o, tok.RefreshToken, "refresh_token")
		if g := e.grantView(t, gid); g.Status != "revoked" {
			t.Fatalf("%s: after revoking the refresh token the grant is %s", client, g.Status)
		}
	}
	// Without a hint too.
	o := e.opts("demo-partner")
	o.Restaurant = restA
	_, tok := e.approve(t, o)
	gid := grantID(t, tok.AccessToken)
	e.revoke(t, o, tok.RefreshToken, "")
	if g := e.grantView(t, gid); g.Status != "revoked" {
		t.Fatalf("without a hint the grant is %s", g.Status)
	}
}
