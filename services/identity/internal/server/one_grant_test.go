package server_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"partnerapi.dev/services/identity/internal/flow"
)

// TestApprovingAgainExtendsTheAuthorization: approving the same app again
// for the same restaurant, or the same organizations, extends the
// authorization the user already gave (scopes as the union, the earlier
// tokens go on) instead of making another; the connected-apps page shows
// it once. Another restaurant, other organizations, or an authorization that
// has ended make a new one; two approvals at once make one.
func TestApprovingAgainExtendsTheAuthorization(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	approve := func(scope, restaurant string, orgs ...string) (string, *flow.Token) {
		t.Helper()
		o := e.opts("demo-partner")
		o.Scope, o.Restaurant, o.Organizations = scope, restaurant, orgs
		_, tok := e.approve(t, o)
		return grantID(t, tok.AccessToken), tok
	}
	first, tok1 := approve("svc.restaurant.read", restA)
	again, tok2 := approve("svc.orders.read", restA)
	if again != first {
		t.Fatalf("approving the same restaurant again made grant %s beside %s", again, first)
	}
	// The token holds what this approval asked for; the grant the union.
	if tok2.Scope != "svc.orders.read" {
		t.Fatalf("the new token's scope %q, want this approval's svc.orders.read", tok2.Scope)
	}
	g, _, err := e.parts.Store.Grant(context.Background(), first)
	if err != nil || !slices.Contains(g.Scopes, "svc.orders.read") || !slices.Contains(g.Scopes, "svc.restaurant.read") {
		t.Fatalf("grant scopes %v (%v)", g.Scopes, err)
	}
	if st := e.partner(t, "/v1/restaurants", grantID(t, tok1.AccessToken), nil); st != http.StatusOK {
		t.Errorf("the first token's grant after the second approval: %d", st)
	}
	_, list := signIn(t, e, ownerEmail, "/account")
	if n := strings.Count(list.body, `href="/account/authorizations/`+first+`"`); n != 1 {
		t.Errorf("the page shows the authorization %d times", n)
	}
	if n := strings.Count(list.body, "<section class=\"app\""); n != 1 {
		t.Errorf("the page shows %d apps after two approvals of one", n)
	}

	north, _ := approve("svc.restaurant.read svc.organization.read", "", orgNorth)
	if again, _ := approve("svc.restaurant.read svc.organization.read svc.orders.read", "", orgNorth); again != north {
		t.Errorf("approving the same organization again made grant %s beside %s", again, north)
	}
	if both, _ := approve("svc.restaurant.read svc.organization.read", "", orgNorth, orgSouth); both == north {
		t.Errorf("approving other organizations extended grant %s", north)
	}
	if other, _ := approve("svc.restaurant.read svc.organization.read", "", orgSouth); other == north {
		t.Errorf("approving another organization extended grant %s", north)
	}

	if st := e.admin(t, http.MethodPost, "/admin/v1/grants/"+first+"/revoke", nil, nil); st != http.StatusOK {
		t.Fatalf("revoke: %d", st)
	}
	renewed, _ := approve("svc.restaurant.read", restA)
	if renewed == first {
		t.Fatal("approving again after a revocation revived the revoked grant")
	}

	// Two approvals at once make one grant.
	var wg sync.WaitGroup
	ids := make([]string, 4)
	for i := range ids {
		wg.Go(func() {
			o := e.opts("demo-partner")
			o.Scope, o.Restaurant = "svc.accounting.read", restA
			res, err := flow.Authorize(context.Background(), o)
			if err == nil {
				var tok *flow.Token
				if tok, err = flow.Exchange(context.Background(), o, res); err == nil {
					ids[i] = grantID(t, tok.AccessToken)
				}
			}
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id != renewed {
			t.Fatalf("approvals at once made grants %v beside %s", ids, renewed)
		}
	}
}
