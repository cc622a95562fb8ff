package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The operator's lists page through the directory on the internal listener,
// only with the admin token, and never show a password hash.
func TestAdminListsOnTheInternalListener(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, path := range []string{"/admin/v1/organizations", "/admin/v1/restaurants", "/admin/v1/users", "/admin/v1/memberships"} {
		var env map[string]any
		if st := e.send(t, e.internal, http.MethodGet, path, nil, &env, nil); st != http.StatusUnauthorized || env["error"] != "invalid_token" {
			t.Errorf("%s without the token: %d %v", path, st, env)
		}
		if st := e.call(t, http.MethodGet, path, nil, &env, map[string]string{"Authorization": "Bearer " + adminToken}); st != http.StatusNotFound {
			t.Errorf("%s on the public listener: %d", path, st)
		}
	}

	type page struct {
		Data       []map[string]any
		NextCursor *string
	}
	all := func(path string, limit string) []map[string]any {
		var rows []map[string]any
		q := url.Values{"limit": {limit}}
		for {
			var p page
			if st := e.admin(t, http.MethodGet, path+"?"+q.Encode(), nil, &p); st != http.StatusOK {
				t.Fatalf("%s?%s: %d", path, q.Encode(), st)
			}
			rows = append(rows, p.Data...)
			if p.NextCursor == nil {
				return rows
			}
			q.Set("cursor", *p.NextCursor)
		}
	}
	users := all("/admin/v1/users", "1")
	if len(users) != 2 || users[0]["userId"] == users[1]["userId"] {
		t.Fatalf("users: %v", users)
	}
	for _, u := range users {
		for k := range u {
			if strings.Contains(strings.ToLower(k), "password") {
				t.Fatalf("a user shows %s: %v", k, u)
			}
		}
	}
	if orgs := all("/admin/v1/organizations", "50"); len(orgs) != 2 || orgs[0]["registeredName"] == "" {
		t.Fatalf("organizations: %v", orgs)
	}
	rests := all("/admin/v1/restaurants", "2")
	if len(rests) != 3 {
		t.Fatalf("restaurants: %v", rests)
	}
	for _, r := range rests {
		if r["restaurantId"] == restC && (r["timeZone"] != "Europe/Stockholm" || r["dayStartHour"] != float64(6) || r["currency"] != "SEK" || r["country"] != "SE" || len(r["organizationIds"].([]any)) != 2) {
			t.Fatalf("restaurant: %v", r)
		}
	}
	ms := all("/admin/v1/memberships", "2")
	if len(ms) != 3 || ms[0]["restaurantId"] != restA || ms[0]["organizationId"] != nil || ms[1]["organizationId"] != orgNorth || ms[1]["role"] != "admin" {
		t.Fatalf("memberships: %v", ms)
	}

	var env map[string]any
	for _, q := range []string{"limit=0", "limit=201", "limit=x", "cursor=forged", "sort=name"} {
		if st := e.admin(t, http.MethodGet, "/admin/v1/users?"+q, nil, &env); st != http.StatusBadRequest || env["error"] != "invalid_request" {
			t.Errorf("users?%s: %d %v", q, st, env)
		}
	}
	var p page
	e.admin(t, http.MethodGet, "/admin/v1/users?limit=1", nil, &p)
	if st := e.admin(t, http.MethodGet, "/admin/v1/organizations?cursor="+url.QueryEscape(*p.NextCursor), nil, &env); st != http.StatusBadRequest {
		t.Errorf("a users cursor on organizations: %d %v", st, env)
	}
}
