package server_test

import (
	"encoding/json"
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
		var env errorAnswer
		if st := e.send(t, e.internal, http.MethodGet, path, nil, &env, nil); st != http.StatusUnauthorized || env.Error != "invalid_token" {
			t.Errorf("%s without the token: %d %+v", path, st, env)
		}
		if st := e.call(t, http.MethodGet, path, nil, &env, map[string]string{"Authorization": "Bearer " + adminToken}); st != http.StatusNotFound {
			t.Errorf("%s on the public listener: %d", path, st)
		}
	}

	// A user row is read as a map: the test looks at every field name it has.
	users := adminList[map[string]any](t, e, "/admin/v1/users", "1")
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
	if orgs := adminList[adminOrganization](t, e, "/admin/v1/organizations", "50"); len(orgs) != 2 || orgs[0].RegisteredName == "" {
		t.Fatalf("organizations: %+v", orgs)
	}
	rests := adminList[adminRestaurant](t, e, "/admin/v1/restaurants", "2")
	if len(rests) != 3 {
		t.Fatalf("restaurants: %+v", rests)
	}
	for _, r := range rests {
		if r.RestaurantID == restC && (r.TimeZone != "Europe/Stockholm" || r.DayStartHour != 6 || r.Currency != "SEK" || r.Country != "SE" || len(r.OrganizationIDs) != 2) {
			t.Fatalf("restaurant: %+v", r)
		}
	}
	ms := adminList[adminMembership](t, e, "/admin/v1/memberships", "2")
	if len(ms) != 3 || ms[0].RestaurantID == nil || *ms[0].RestaurantID != restA || ms[0].OrganizationID != nil ||
		ms[1].OrganizationID == nil || *ms[1].OrganizationID != orgNorth || ms[1].Role != "admin" {
		t.Fatalf("memberships: %s", asJSON(ms))
	}

	for _, q := range []string{"limit=0", "limit=201", "limit=x", "cursor=forged", "sort=name"} {
		var env errorAnswer
		if st := e.admin(t, http.MethodGet, "/admin/v1/users?"+q, nil, &env); st != http.StatusBadRequest || env.Error != "invalid_request" {
			t.Errorf("users?%s: %d %+v", q, st, env)
		}
	}
	var p adminPage[json.RawMessage]
	e.admin(t, http.MethodGet, "/admin/v1/users?limit=1", nil, &p)
	var env errorAnswer
	if st := e.admin(t, http.MethodGet, "/admin/v1/organizations?cursor="+url.QueryEscape(*p.NextCursor), nil, &env); st != http.StatusBadRequest {
		t.Errorf("a users cursor on organizations: %d %+v", st, env)
	}
}

// adminPage is one page of an operator's list; nextCursor is null on the
// last page.
type adminPage[T any] struct {
	Data       []T     `json:"data"`
	NextCursor *string `json:"nextCursor"`
}

type adminUser struct {
	UserID string `json:"userId"`
	Email  string `json:"email"`
	Name   string `json:"name"`
}

type adminOrganization struct {
	OrganizationID string `json:"organizationId"`
	Name           string `json:"name"`
	RegisteredName string `json:"registeredName"`
	BusinessID     string `json:"businessId"`
}

type adminRestaurant struct {
	RestaurantID    string   `json:"restaurantId"`
	Name            string   `json:"name"`
	TimeZone        string   `json:"timeZone"`
	DayStartHour    int      `json:"dayStartHour"`
	Currency        string   `json:"currency"`
	Country         string   `json:"country"`
	RegisteredName  string   `json:"registeredName"`
	BusinessID      string   `json:"businessId"`
	OrganizationIDs []string `json:"organizationIds"`
}

// adminMembership names exactly one of a restaurant and an organization;
// the other is null.
type adminMembership struct {
	UserID         string  `json:"userId"`
	RestaurantID   *string `json:"restaurantId"`
	OrganizationID *string `json:"organizationId"`
	Role           string  `json:"role"`
}

// adminList reads every page of an operator's list, limit rows at a time.
func adminList[T any](t *testing.T, e *env, path, limit string) []T {
	t.Helper()
	var rows []T
	q := url.Values{"limit": {limit}}
	for {
		var p adminPage[T]
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
