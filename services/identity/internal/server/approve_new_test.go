package server_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"partnerapi.dev/services/identity/internal/domain"
)

const restE = "22222222-2222-4222-8222-00000000000e"

// partnerRestaurants lists the restaurant ids the demo partner sees under
// grantID (GET /v1/restaurants).
func (e *env) partnerRestaurants(t *testing.T, grantID string) []string {
	t.Helper()
	var out struct {
		Data []struct {
			RestaurantID string `json:"restaurantId"`
		} `json:"data"`
	}
	if st := e.partner(t, "/v1/restaurants", grantID, &out); st != http.StatusOK {
		t.Fatalf("partner restaurants: %d", st)
	}
	var ids []string
	for _, r := range out.Data {
		ids = append(ids, r.RestaurantID)
	}
	slices.Sort(ids)
	return ids
}

// A restaurant added to an organization after its approval is shown on the
// page with the way to approve it; only an administrator of that
// organization may, only for an active grant that names it, and the partner
// then reaches it.
func TestConnectedAppsApproveNewRestaurants(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := seedAccounts(t, e)
	doc := domain.DirectoryImport{Restaurants: []domain.ImportRestaurant{{RestaurantID: restE, Name: "Epsilon Eatery", TimeZone: "Europe/Helsinki",
		DayStartHour: ptr(4), Currency: "EUR", Country: "FI", RegisteredName: "Epsilon Oy", BusinessID: "E-2", OrganizationIDs: []string{orgNorth}}}}
	if st := e.admin(t, http.MethodPost, "/admin/v1/directory/import", doc, nil); st != http.StatusOK {
		t.Fatalf("import: %d", st)
	}
	if got := e.partnerRestaurants(t, g.north); slices.Contains(got, restE) {
		t.Fatalf("a restaurant added after approval is covered: %v", got)
	}
	approve := `action="/account/authorizations/` + g.north + `/approve-new"`

	// Bea owns Beta Diner of North Group but does not administer it: she
	// sees the grant, not the button, and her post is refused.
	bea, beaList := signIn(t, e, beaEmail, "/account")
	if !strings.Contains(beaList.body, "1 added since approval and not covered: Epsilon Eatery") || strings.Contains(beaList.body, approve) {
		t.Fatalf("Bea's page:\n%s", beaList.body)
	}
	form := func(csrf, org string) url.Values { return url.Values{"csrf_token": {csrf}, "organization_id": {org}} }
	if p := bea.post("/account/authorizations/"+g.north+"/approve-new", form(csrfOf(t, beaList), orgNorth)); p.status != http.StatusNotFound {
		t.Fatalf("Bea approving: %d", p.status)
	}
	// Sam administers South Group only: the North grant is not his to see.
	sam, samList := signIn(t, e, samEmail, "/account")
	if p := sam.post("/account/authorizations/"+g.north+"/approve-new", form(csrfOf(t, samList), orgNorth)); p.status != http.StatusNotFound {
		t.Fatalf("Sam approving another organization's grant: %d", p.status)
	}

	b, list := signIn(t, e, ownerEmail, "/account")
	if !strings.Contains(list.body, approve) || !strings.Contains(list.body, "Approve Epsilon Eatery for Demo Partner too") {
		t.Fatalf("the administrator's page lacks the approval:\n%s", list.body)
	}
	csrf := csrfOf(t, list)
	for _, c := range []struct {
		name, csrf, org string
		status          int
	}{
		{"an organization the grant does not name", csrf, orgSouth, http.StatusNotFound},
		{"an organization of someone else's", csrf, orgEast, http.StatusNotFound},
		{"forged CSRF token (last: it ends the session)", "forged", orgNorth, http.StatusForbidden},
	} {
		if p := b.post("/account/authorizations/"+g.north+"/approve-new", form(c.csrf, c.org)); p.status != c.status {
			t.Errorf("%s: %d, want %d", c.name, p.status, c.status)
		}
	}
	if got := e.partnerRestaurants(t, g.north); slices.Contains(got, restE) {
		t.Fatalf("a refused approval extended the grant: %v", got)
	}
	b, list = signIn(t, e, ownerEmail, "/account")
	p := b.post("/account/authorizations/"+g.north+"/approve-new", form(csrfOf(t, list), orgNorth))
	if p.status != http.StatusSeeOther || p.location != "/account?approved=1" {
		t.Fatalf("approve: %d %q\n%s", p.status, p.location, p.body)
	}
	if got := e.partnerRestaurants(t, g.north); !slices.Equal(got, []string{restB, restC, restE}) {
		t.Fatalf("after approval the partner sees %v", got)
	}
	after := b.get(p.location)
	if !strings.Contains(after.body, "The new restaurants are now covered.") || strings.Contains(after.body, approve) || !strings.Contains(after.body, "3 restaurants covered") {
		t.Fatalf("page after approval:\n%s", after.body)
	}

	// A revoked grant gains nothing.
	if st := e.admin(t, http.MethodPost, "/admin/v1/grants/"+g.north+"/revoke", nil, nil); st != http.StatusOK {
		t.Fatal(st)
	}
	if st := e.admin(t, http.MethodPost, "/admin/v1/directory/import", domain.DirectoryImport{Restaurants: []domain.ImportRestaurant{{RestaurantID: restD,
		Name: "Delta Deli", TimeZone: "Europe/Helsinki", DayStartHour: ptr(4), Currency: "EUR", Country: "FI", RegisteredName: "Delta Oy", BusinessID: "D-1",
		OrganizationIDs: []string{orgEast, orgNorth}}}}, nil); st != http.StatusOK {
		t.Fatal(st)
	}
	if p := b.post("/account/authorizations/"+g.north+"/approve-new", form(csrfOf(t, after), orgNorth)); p.status != http.StatusConflict {
		t.Fatalf("approving for a revoked grant: %d", p.status)
	}
}
