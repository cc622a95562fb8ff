package server_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/identity/internal/domain"
)

func grantFor(t *testing.T, e *env, restaurant string, orgs ...string) string {
	t.Helper()
	o := e.opts("demo-partner")
	o.Scope = "svc.restaurant.read svc.organization.read"
	o.Restaurant, o.Organizations = restaurant, orgs
	_, tok := e.approve(t, o)
	return grantID(t, tok.AccessToken)
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestRestaurantBoundary(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	gid := grantFor(t, e, restA)

	var rs map[string]any
	if st := e.partner(t, "/v1/restaurants", gid, &rs); st != 200 {
		t.Fatalf("restaurants: %d %v", st, rs)
	}
	want := `{"data":[{"restaurantId":"` + restA + `","restaurantName":"Alpha Bistro","role":"owner"}],"meta":{"authorization_boundary":"restaurant"}}`
	if asJSON(rs) != want {
		t.Fatalf("restaurants:\n got %s\nwant %s", asJSON(rs), want)
	}
	var orgs map[string]any
	e.partner(t, "/v1/organizations", gid, &orgs)
	if asJSON(orgs) != `{"data":{"authorizedRestaurantCount":0,"organizationCount":0,"organizations":[]}}` {
		t.Fatalf("organizations: %s", asJSON(orgs))
	}
	var g contracts.Grant
	if st := e.partner(t, "/internal/v1/grants/"+gid, gid, &g); st != 200 {
		t.Fatalf("internal: %d", st)
	}
	if g.Boundary != "restaurant" || g.Status != "active" || g.ClientStatus != "approved" || g.UserID != userOwner || g.ClientID != "demo-partner" {
		t.Fatalf("internal grant: %+v", g)
	}
	// svc.organization.read is not approved for a restaurant boundary.
	if !reflect.DeepEqual(g.Scopes, []string{"svc.restaurant.read"}) {
		t.Fatalf("scopes: %q", g.Scopes)
	}
	wantRestaurants := []contracts.GrantRestaurant{{RestaurantID: restA, TimeZone: "Europe/Helsinki", DayStartHour: 4, Currency: "EUR", Country: "FI", OrganizationIDs: []string{}}}
	if !reflect.DeepEqual(g.Restaurants, wantRestaurants) || !reflect.DeepEqual(g.Organizations, []contracts.GrantOrganization{}) {
		t.Fatalf("internal restaurants: %s %s", asJSON(g.Restaurants), asJSON(g.Organizations))
	}
	// Current settings, not the ones at approval.
	doc := seedDoc()
	doc.Restaurants[0].DayStartHour = ptr(6)
	doc.Restaurants[0].TimeZone = "Europe/Tallinn"
	e.admin(t, http.MethodPost, "/admin/v1/directory/import", domain.DirectoryImport{Restaurants: doc.Restaurants[:1]}, nil)
	var current contracts.Grant
	e.partner(t, "/internal/v1/grants/"+gid, gid, &current)
	if len(current.Restaurants) == 0 || current.Restaurants[0].DayStartHour != 6 || current.Restaurants[0].TimeZone != "Europe/Tallinn" {
		t.Fatalf("settings not current: %+v", current.Restaurants)
	}
	// Revoked: partner views refuse with insufficient_scope.
	e.admin(t, http.MethodPost, "/admin/v1/grants/"+gid+"/revoke", nil, nil)
	var env errorAnswer
	if st := e.partner(t, "/v1/restaurants", gid, &env); st != 403 || env.Error != "insufficient_scope" {
		t.Fatalf("revoked: %d %+v", st, env)
	}
}

func TestOrganizationBoundaryCoverageAndTruncation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	gid := grantFor(t, e, "", orgNorth, orgSouth)

	var rs map[string]any
	e.partner(t, "/v1/restaurants", gid, &rs)
	want := `{"data":[{"businessIdentity":{"businessId":"B-1","registeredName":"Beta Oy"},"restaurantId":"` + restB + `","restaurantName":"Beta Diner"},` +
		`{"businessIdentity":{"businessId":"C-1","registeredName":"Gamma AB"},"restaurantId":"` + restC + `","restaurantName":"Gamma Grill"}],` +
		`"meta":{"authorization_boundary":"organization","authorization_coverage":{"additional_restaurant_count":0,"authorized_restaurant_count":2,"current_restaurant_count":2,"reauthorization_available":false},"restaurants_truncated":false}}`
	if got := asJSON(rs); got != want {
		t.Fatalf("restaurants:\n got %s\nwant %s", got, want)
	}

	// A restaurant joins North after approval: not covered, but counted.
	doc := seedDoc()
	d := domain.ImportRestaurant{RestaurantID: restD, Name: "Delta Deli", TimeZone: "Europe/Helsinki", DayStartHour: ptr(4), Currency: "EUR", Country: "FI", RegisteredName: "Delta Oy", BusinessID: "D-1", OrganizationIDs: []string{orgNorth}}
	doc.Restaurants = append(doc.Restaurants, d)
	if st := e.admin(t, http.MethodPost, "/admin/v1/directory/import", doc, nil); st != 200 {
		t.Fatalf("import: %d", st)
	}
	e.partner(t, "/v1/restaurants", gid, &rs)
	cov := rs["meta"].(map[string]any)["authorization_coverage"]
	if asJSON(cov) != `{"additional_restaurant_count":1,"authorized_restaurant_count":2,"current_restaurant_count":3,"reauthorization_available":true}` {
		t.Fatalf("coverage after addition: %s", asJSON(cov))
	}
	if len(rs["data"].([]any)) != 2 {
		t.Fatalf("new restaurant leaked into the grant: %v", rs["data"])
	}

	var orgs struct {
		Data struct {
			Organizations []struct {
				OrganizationID, OrganizationName, Role string
				Restaurants                            []struct {
					RestaurantID     string
					RestaurantName   string
					BusinessIdentity map[string]string
				}
				RestaurantsTruncated  bool
				AuthorizationCoverage map[string]any
			}
			OrganizationCount, AuthorizedRestaurantCount int
		}
	}
	e.partner(t, "/v1/organizations", gid, &orgs)
	o := orgs.Data
	if o.OrganizationCount != 2 || o.AuthorizedRestaurantCount != 2 || len(o.Organizations) != 2 {
		t.Fatalf("organizations: %+v", o)
	}
	north, south := o.Organizations[0], o.Organizations[1]
	if north.OrganizationID != orgNorth || north.Role != "admin" || len(north.Restaurants) != 2 || north.Restaurants[0].BusinessIdentity["businessId"] != "B-1" ||
		asJSON(north.AuthorizationCoverage) != `{"additionalRestaurantCount":1,"authorizedRestaurantCount":2,"currentRestaurantCount":3,"reauthorizationAvailable":true}` {
		t.Fatalf("north: %+v", north)
	}
	if south.OrganizationID != orgSouth || south.Role != "owner" || len(south.Restaurants) != 1 || south.Restaurants[0].RestaurantID != restC ||
		asJSON(south.AuthorizationCoverage) != `{"additionalRestaurantCount":0,"authorizedRestaurantCount":1,"currentRestaurantCount":1,"reauthorizationAvailable":false}` {
		t.Fatalf("south: %+v", south)
	}

	// The gateway's view: exact associations, current settings.
	var g struct {
		GrantID, ClientID, ClientStatus, UserID, Status, ExpiresAt, Boundary string
		Scopes                                                               []string
		Restaurants                                                          []struct {
			RestaurantID, TimeZone, Currency, Country string
			DayStartHour                              int
			OrganizationIDs                           []string
		}
		Organizations []struct {
			OrganizationID string
			RestaurantIDs  []string
		}
	}
	e.partner(t, "/internal/v1/grants/"+gid, gid, &g)
	if g.GrantID != gid || g.Boundary != "organization" || !reflect.DeepEqual(g.Scopes, []string{"svc.restaurant.read", "svc.organization.read"}) || g.ExpiresAt == "" {
		t.Fatalf("internal grant: %+v", g)
	}
	if len(g.Restaurants) != 2 || !reflect.DeepEqual(g.Restaurants[1].OrganizationIDs, []string{orgNorth, orgSouth}) || g.Restaurants[1].Currency != "SEK" {
		t.Fatalf("internal restaurants: %+v", g.Restaurants)
	}
	if len(g.Organizations) != 2 || !reflect.DeepEqual(g.Organizations[0].RestaurantIDs, []string{restB, restC}) || !reflect.DeepEqual(g.Organizations[1].RestaurantIDs, []string{restC}) {
		t.Fatalf("internal organizations: %+v", g.Organizations)
	}

	// Truncation at the cap.
	*e.parts.ListCap = 1
	e.partner(t, "/v1/restaurants", gid, &rs)
	if len(rs["data"].([]any)) != 1 || rs["meta"].(map[string]any)["restaurants_truncated"] != true {
		t.Fatalf("truncation: %s", asJSON(rs))
	}
	e.partner(t, "/v1/organizations", gid, &orgs)
	if !orgs.Data.Organizations[0].RestaurantsTruncated || len(orgs.Data.Organizations[0].Restaurants) != 1 || orgs.Data.Organizations[1].RestaurantsTruncated || orgs.Data.AuthorizedRestaurantCount != 2 {
		t.Fatalf("organization truncation: %+v", orgs.Data)
	}

	// A restaurant that leaves an organization is no longer covered through it.
	doc.Restaurants[2].OrganizationIDs = []string{orgNorth}
	e.admin(t, http.MethodPost, "/admin/v1/directory/import", doc, nil)
	*e.parts.ListCap = 500
	e.partner(t, "/internal/v1/grants/"+gid, gid, &g)
	if !reflect.DeepEqual(g.Organizations[1].RestaurantIDs, []string{}) {
		t.Fatalf("after leaving: %+v", g.Organizations)
	}
}

func TestInternalAndAdminRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var env errorAnswer
	unknown := "44444444-4444-4444-8444-444444444444"
	if st := e.partner(t, "/internal/v1/grants/"+unknown, "", &env); st != 404 || env.Error != "not_found" || env.RequestID == "" {
		t.Fatalf("unknown grant: %d %+v", st, env)
	}
	if st := e.call(t, http.MethodGet, "/internal/v1/grants/"+unknown, nil, &env, nil); st != 401 {
		t.Fatalf("no internal context: %d", st)
	}
	if st := e.call(t, http.MethodGet, "/v1/restaurants", nil, &env, nil); st != 401 {
		t.Fatalf("partner route without context: %d", st)
	}
	for _, h := range []map[string]string{nil, {"Authorization": "Bearer wrong"}, {"Authorization": adminToken}} {
		var env errorAnswer
		if st := e.send(t, e.internal, http.MethodGet, "/admin/v1/clients", nil, &env, h); st != 401 || env.Error != "invalid_token" {
			t.Fatalf("admin auth %v: %d %+v", h, st, env)
		}
	}
}

func TestAdminImportIsIdempotentAndStrict(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var before, after []struct{ ID, PasswordHash string }
	e.db.Gorm.Raw(`SELECT id::text AS id, password_hash FROM users ORDER BY id`).Scan(&before)
	var res map[string]map[string]int
	if st := e.admin(t, http.MethodPost, "/admin/v1/directory/import", seedDoc(), &res); st != 200 || res["data"]["restaurants"] != 3 {
		t.Fatalf("second import: %d %v", st, res)
	}
	e.db.Gorm.Raw(`SELECT id::text AS id, password_hash FROM users ORDER BY id`).Scan(&after)
	if !reflect.DeepEqual(before, after) {
		t.Fatal("re-import changed password hashes")
	}
	var counts struct{ U, O, R, M, C, A int }
	e.db.Gorm.Raw(`SELECT (SELECT count(*) FROM users) u, (SELECT count(*) FROM organizations) o, (SELECT count(*) FROM restaurants) r,
		(SELECT count(*) FROM memberships) m, (SELECT count(*) FROM partner_clients) c, (SELECT count(*) FROM organization_restaurants) a`).Scan(&counts)
	if counts != (struct{ U, O, R, M, C, A int }{2, 2, 3, 3, 4, 3}) {
		t.Fatalf("counts after re-import: %+v", counts)
	}

	bad := `{"users":[{"userId":"nope","email":"x","name":"","password":"short"}],"restaurants":[{"restaurantId":"` + restA + `","name":"A","timeZone":"Mars/Olympus","dayStartHour":24,"currency":"eur","country":"XX","registeredName":"A","businessId":"1","organizationIds":[]}],"memberships":[{"userId":"` + userOwner + `","restaurantId":null,"organizationId":null,"role":"owner"}],"partnerClients":[{"clientId":"p1","name":"P","type":"confidential","secret":null,"redirectUris":["http://example.com/cb"],"allowedScopes":["svc.nope"],"status":"approved"}]}`
	req, _ := http.NewRequest(http.MethodPost, e.internal+"/admin/v1/directory/import", strings.NewReader(bad))
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Content-Type", "application/json")
	var env map[string]string
	if st := doJSON(t, req, &env); st != 400 || env["error"] != "invalid_request" {
		t.Fatalf("bad import: %d %v", st, env)
	}
	for _, field := range []string{"users[0].userId", "users[0].email", "users[0].name", "users[0].password", "restaurants[0].timeZone", "restaurants[0].dayStartHour",
		"restaurants[0].currency", "restaurants[0].country", "memberships[0]", "partnerClients[0].redirectUris[0]", "partnerClients[0].allowedScopes[0]", "partnerClients[0].secret"} {
		if !strings.Contains(env["message"], field) {
			t.Errorf("message does not name %s: %s", field, env["message"])
		}
	}
	req, _ = http.NewRequest(http.MethodPost, e.internal+"/admin/v1/directory/import", strings.NewReader(`{"users":[],"extra":1}`))
	req.Header.Set("Authorization", "Bearer "+adminToken)
	if st := doJSON(t, req, &env); st != 400 || !strings.Contains(env["message"], "extra") {
		t.Fatalf("unknown field: %d %v", st, env)
	}

	// Client registration generates a secret for confidential clients.
	var created struct {
		Data struct {
			ClientID, ClientSecret, Status string
		}
	}
	if st := e.admin(t, http.MethodPost, "/admin/v1/clients", map[string]any{"clientId": "new-partner", "name": "New", "type": "confidential", "redirectUris": []string{"https://partner.example/cb"}, "allowedScopes": []string{"svc.restaurant.read"}}, &created); st != 201 || created.Data.ClientSecret == "" || created.Data.Status != "pending" {
		t.Fatalf("create client: %d %+v", st, created)
	}
	if st := e.admin(t, http.MethodPost, "/admin/v1/clients", map[string]any{"clientId": "new-partner", "name": "New", "type": "public", "redirectUris": []string{"https://partner.example/cb"}, "allowedScopes": []string{"svc.restaurant.read"}}, nil); st != 409 {
		t.Fatalf("duplicate client: %d", st)
	}
}

func TestAdminImportLargerThanOneMiB(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var d domain.DirectoryImport
	long := strings.Repeat("x", 150)
	for i := 0; i < 4000; i++ {
		id := "55555555-5555-4555-8555-" + strings.Repeat("0", 12-len(itoa(i))) + itoa(i)
		d.Restaurants = append(d.Restaurants, domain.ImportRestaurant{RestaurantID: id, Name: "R " + long, TimeZone: "Europe/Helsinki", DayStartHour: ptr(4),
			Currency: "EUR", Country: "FI", RegisteredName: "Reg " + long, BusinessID: itoa(i)})
	}
	if b, _ := json.Marshal(d); len(b) < 1<<20 {
		t.Fatalf("body only %d bytes", len(b))
	}
	var res map[string]map[string]int
	if st := e.admin(t, http.MethodPost, "/admin/v1/directory/import", d, &res); st != 200 || res["data"]["restaurants"] != 4000 {
		t.Fatalf("large import: %d %v", st, res)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
