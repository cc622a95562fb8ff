package server_test

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/services/identity/internal/domain"
	"partnerapi.dev/services/identity/internal/flow"
)

// The connected-apps directory, added to the seed: Bea owns Beta Diner
// (which is in North Group), Sam administers South Group only, Eve
// administers East Group (Delta Deli) and nobody else has a role there.
const (
	userBea = "11111111-1111-4111-8111-333333333333"
	userSam = "11111111-1111-4111-8111-444444444444"
	userEve = "11111111-1111-4111-8111-555555555555"
	orgEast = "33333333-3333-4333-8333-000000000003"
)

var (
	beaEmail = "bea@demo.example"
	samEmail = "sam@demo.example"
	eveEmail = "eve@demo.example"
)

// accountGrants are one grant of each shape the visibility rules tell apart.
type accountGrants struct{ a, north, south, b, east string }

func seedAccounts(t *testing.T, e *env) accountGrants {
	t.Helper()
	doc := domain.DirectoryImport{
		Users: []domain.ImportUser{
			{UserID: userBea, Email: beaEmail, Name: "Bea Beta", Password: ownerPW},
			{UserID: userSam, Email: samEmail, Name: "Sam South", Password: ownerPW},
			{UserID: userEve, Email: eveEmail, Name: "Eve East", Password: ownerPW},
		},
		Organizations: []domain.ImportOrganization{{OrganizationID: orgEast, Name: "East Group", RegisteredName: "East Group Oy", BusinessID: "E-1"}},
		Restaurants: []domain.ImportRestaurant{{RestaurantID: restD, Name: "Delta Deli", TimeZone: "Europe/Helsinki", DayStartHour: ptr(4), Currency: "EUR",
			Country: "FI", RegisteredName: "Delta Oy", BusinessID: "D-1", OrganizationIDs: []string{orgEast}}},
		Memberships: []domain.ImportMembership{
			{UserID: userBea, RestaurantID: ptr(restB), Role: "owner"},
			{UserID: userSam, OrganizationID: ptr(orgSouth), Role: "admin"},
			{UserID: userEve, OrganizationID: ptr(orgEast), Role: "admin"},
		},
	}
	var out json.RawMessage
	if st := e.admin(t, http.MethodPost, "/admin/v1/directory/import", doc, &out); st != http.StatusOK {
		t.Fatalf("import: %d %s", st, out)
	}
	grant := func(client, user string, b domain.Boundary, restaurant string, orgs ...string) string {
		id, err := e.parts.Store.CreateGrant(context.Background(), domain.GrantRequest{ClientID: client, UserID: user, Scopes: []string{"svc.restaurant.read", "svc.orders.read"},
			Boundary: b, RestaurantID: restaurant, OrganizationIDs: orgs, ExpiresAt: time.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	return accountGrants{
		a:     grant("demo-partner", userOwner, domain.BoundaryRestaurant, restA),
		north: grant("demo-partner", userOwner, domain.BoundaryOrganization, "", orgNorth),
		south: grant("conf-partner", userSam, domain.BoundaryOrganization, "", orgSouth),
		b:     grant("conf-partner", userBea, domain.BoundaryRestaurant, restB),
		east:  grant("demo-partner", userEve, domain.BoundaryOrganization, "", orgEast),
	}
}

// browser is a cookie-keeping client that does not follow redirects.
type browser struct {
	t    *testing.T
	e    *env
	http *http.Client
}

type page struct {
	status   int
	location string
	body     string
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	resp, err := b.http.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, location: resp.Header.Get("Location"), body: string(body)}
}

func (b *browser) get(path string) page {
	req, _ := http.NewRequest(http.MethodGet, b.e.base+path, nil)
	return b.do(req)
}

func (b *browser) post(path string, form url.Values) page {
	req, _ := http.NewRequest(http.MethodPost, b.e.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

// submit posts the page's form with its hidden fields and extra values.
func (b *browser) submit(p page, extra url.Values) page {
	b.t.Helper()
	f, err := flow.ParseForm([]byte(p.body))
	if err != nil {
		b.t.Fatalf("no form on the page (%v):\n%s", err, p.body)
	}
	form := url.Values{}
	for k, v := range f.Hidden {
		form.Set(k, v)
	}
	for k, v := range extra {
		form[k] = v
	}
	return b.post(f.Action, form)
}

// signIn opens path signed out, signs in on the page it gets and follows
// the redirect back.
func signIn(t *testing.T, e *env, email, path string) (*browser, page) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &browser{t: t, e: e, http: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	p := b.get(path)
	if p.status != http.StatusOK || !strings.Contains(p.body, "Sign in to see your connected apps") {
		t.Fatalf("GET %s signed out: %d\n%s", path, p.status, p.body)
	}
	p = b.submit(p, url.Values{"email": {email}, "password": {ownerPW}})
	if p.status != http.StatusSeeOther || p.location != path {
		t.Fatalf("sign-in from %s: %d to %q\n%s", path, p.status, p.location, p.body)
	}
	return b, b.get(path)
}

func (b *browser) revoke(grantID string, csrf string) page {
	return b.post("/account/authorizations/"+grantID+"/revoke", url.Values{"csrf_token": {csrf}})
}

// csrfOf is the CSRF token of the page's form.
func csrfOf(t *testing.T, p page) string {
	t.Helper()
	f, err := flow.ParseForm([]byte(p.body))
	if err != nil {
		t.Fatalf("no form: %v\n%s", err, p.body)
	}
	return f.Hidden["csrf_token"]
}

func (e *env) grantStatus(t *testing.T, id string) string {
	t.Helper()
	g, _, err := e.parts.Store.Grant(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return g.Status
}

func TestConnectedAppsVisibility(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := seedAccounts(t, e)
	all := map[string]string{"a": g.a, "north": g.north, "south": g.south, "b": g.b, "east": g.east}
	for _, c := range []struct {
		name, email string
		sees        []string
	}{
		// Owner of Alpha Bistro, admin of North Group, owner of South Group:
		// Beta Diner and Gamma Grill are in their organizations.
		{"owner and administrator", ownerEmail, []string{"a", "north", "south", "b"}},
		// Owner of Beta Diner only: its own grant, and North Group's, which
		// covers Beta Diner.
		{"restaurant owner", beaEmail, []string{"b", "north"}},
		// Administrator of South Group only: South's grant, and North's,
		// which covers Gamma Grill (in both organizations).
		{"organization administrator", samEmail, []string{"south", "north"}},
		// Administrator of East Group, which shares nothing with the others.
		{"administrator of another organization", eveEmail, []string{"east"}},
		{"no role", otherEmail, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, list := signIn(t, e, c.email, "/account")
			if list.status != http.StatusOK || !strings.Contains(list.body, "<h1>Connected apps</h1>") {
				t.Fatalf("GET /account: %d\n%s", list.status, list.body)
			}
			for name, id := range all {
				link := `href="/account/authorizations/` + id + `"`
				want := contains(c.sees, name)
				if got := strings.Contains(list.body, link); got != want {
					t.Errorf("list shows grant %s: %v, want %v", name, got, want)
				}
				p := b.get("/account/authorizations/" + id)
				if want && p.status != http.StatusOK {
					t.Errorf("GET grant %s: %d, want 200", name, p.status)
				}
				if !want {
					if p.status != http.StatusNotFound {
						t.Errorf("GET grant %s it may not see: %d, want 404", name, p.status)
					}
					// A guessed id is refused alike on the POST, with a
					// valid session and CSRF token, and nothing changes.
					if r := b.revoke(id, csrfOf(t, list)); r.status != http.StatusNotFound {
						t.Errorf("revoke grant %s it may not see: %d, want 404", name, r.status)
					}
					if st := e.grantStatus(t, id); st != "active" {
						t.Errorf("grant %s is %s after another user's attempt", name, st)
					}
				}
			}
			for _, id := range []string{"00000000-0000-4000-8000-000000000000", "not-a-uuid"} {
				if p := b.get("/account/authorizations/" + id); p.status != http.StatusNotFound {
					t.Errorf("GET unknown grant %s: %d", id, p.status)
				}
			}
			if c.sees == nil && !strings.Contains(list.body, "No app has been approved") {
				t.Errorf("empty page lacks its sentence:\n%s", list.body)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestConnectedAppsRevoke: the page shows what a grant covers in plain
// words, the confirmation names what stops, revoking ends the grant (the
// partner's next call is refused) and the grant stays listed as revoked; a
// grant that also covers what the user does not own or administer cannot
// be revoked by them.
func TestConnectedAppsRevoke(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := seedAccounts(t, e)

	t.Run("refused beyond the user's reach", func(t *testing.T) {
		b, list := signIn(t, e, beaEmail, "/account")
		p := b.get("/account/authorizations/" + g.north)
		if p.status != http.StatusOK || !strings.Contains(p.body, "You cannot revoke this access: it also covers Gamma Grill, North Group") ||
			strings.Contains(p.body, "/revoke") {
			t.Fatalf("confirmation of a grant beyond reach: %d\n%s", p.status, p.body)
		}
		r := b.revoke(g.north, csrfOf(t, list))
		if r.status != http.StatusForbidden || !strings.Contains(r.body, "which you do not own or administer") || !strings.Contains(r.body, "Olivia Owner") {
			t.Fatalf("revoke beyond reach: %d\n%s", r.status, r.body)
		}
		if st := e.grantStatus(t, g.north); st != "active" {
			t.Fatalf("grant %s after a refused revocation", st)
		}
	})

	t.Run("forged CSRF token", func(t *testing.T) {
		b, _ := signIn(t, e, beaEmail, "/account/authorizations/"+g.b)
		if r := b.revoke(g.b, "forged"); r.status != http.StatusForbidden {
			t.Fatalf("forged CSRF: %d", r.status)
		}
		if st := e.grantStatus(t, g.b); st != "active" {
			t.Fatalf("grant %s after a forged form", st)
		}
	})

	t.Run("revoke", func(t *testing.T) {
		var view json.RawMessage
		if st := e.partner(t, "/v1/restaurants", g.b, &view); st != http.StatusOK {
			t.Fatalf("partner call before: %d %s", st, view)
		}
		// Signing in from the confirmation page comes back to it.
		b, p := signIn(t, e, beaEmail, "/account/authorizations/"+g.b)
		for _, want := range []string{"Revoke access for Confidential Partner?", "Bea Beta", "Beta Diner", "What stops working",
			html.EscapeString(domain.ScopeWords("svc.orders.read")), "webhook endpoints receive no more deliveries", ">Revoke access</button>"} {
			if !strings.Contains(p.body, want) {
				t.Errorf("confirmation lacks %q", want)
			}
		}
		r := b.submit(p, nil)
		if r.status != http.StatusSeeOther || r.location != "/account?revoked=1" {
			t.Fatalf("revoke: %d %q\n%s", r.status, r.location, r.body)
		}
		if st := e.grantStatus(t, g.b); st != "revoked" {
			t.Fatalf("grant %s after revocation", st)
		}
		if st := e.partner(t, "/v1/restaurants", g.b, &view); st != http.StatusForbidden {
			t.Fatalf("partner call after revocation: %d %s", st, view)
		}
		list := b.get(r.location)
		if !strings.Contains(list.body, "Access revoked.") || !strings.Contains(list.body, `<span class="badge">revoked</span>`) ||
			strings.Contains(list.body, `href="/account/authorizations/`+g.b+`"`) {
			t.Fatalf("list after revocation:\n%s", list.body)
		}
		// Revoking again changes nothing and is no error.
		if again := b.revoke(g.b, csrfOf(t, list)); again.status != http.StatusSeeOther {
			t.Fatalf("second revocation: %d", again.status)
		}
	})

	t.Run("page", func(t *testing.T) {
		b, list := signIn(t, e, ownerEmail, "/account")
		for _, want := range []string{"Demo Partner", "Confidential Partner", "Olivia Owner (owner@demo.example)", "Sam South",
			html.EscapeString(domain.ScopeWords("svc.restaurant.read")), "North Group", "2 restaurants covered", "Alpha Bistro", "Beta Diner", "Gamma Grill"} {
			if !strings.Contains(list.body, want) {
				t.Errorf("page lacks %q", want)
			}
		}
		if strings.Contains(list.body, "Delta Deli") || strings.Contains(list.body, "<script") {
			t.Errorf("page shows another organization's restaurant or a script")
		}
		// Active first: the revoked grant of Beta Diner comes last.
		if i, j := strings.Index(list.body, g.a), strings.Index(list.body, "badge\">revoked"); i < 0 || j < i {
			t.Errorf("active grants are not listed before revoked ones")
		}
		// Signing out ends the session: the page asks to sign in again.
		if out := b.submit(list, nil); out.status != http.StatusSeeOther || out.location != "/account" {
			t.Fatalf("sign out: %d %q", out.status, out.location)
		}
		if p := b.get("/account"); !strings.Contains(p.body, "Sign in to see your connected apps") {
			t.Fatalf("after signing out:\n%s", p.body)
		}
	})
}
