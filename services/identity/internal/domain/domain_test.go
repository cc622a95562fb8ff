package domain

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/services/contracts"
)

func TestApprovedScopes(t *testing.T) {
	allowed := []string{contracts.ScopeRestaurantRead, contracts.ScopeOrganizationRead, "svc.orders.read"}
	for _, tc := range []struct {
		name      string
		requested []string
		boundary  Boundary
		want      []string
	}{
		{"default scope when none requested", nil, BoundaryRestaurant, []string{contracts.ScopeRestaurantRead}},
		{"intersection with allowed", []string{contracts.ScopeRestaurantRead, "svc.menu.read", "svc.orders.read"}, BoundaryRestaurant, []string{contracts.ScopeRestaurantRead, "svc.orders.read"}},
		{"organization scope only for organization boundary", []string{contracts.ScopeRestaurantRead, contracts.ScopeOrganizationRead}, BoundaryRestaurant, []string{contracts.ScopeRestaurantRead}},
		{"organization scope kept when requested", []string{contracts.ScopeRestaurantRead, contracts.ScopeOrganizationRead}, BoundaryOrganization, []string{contracts.ScopeRestaurantRead, contracts.ScopeOrganizationRead}},
		{"organization scope not added when not requested", []string{contracts.ScopeRestaurantRead}, BoundaryOrganization, []string{contracts.ScopeRestaurantRead}},
		{"duplicates dropped", []string{"svc.orders.read", "svc.orders.read"}, BoundaryRestaurant, []string{"svc.orders.read"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ApprovedScopes(tc.requested, allowed, tc.boundary); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestValidateRestaurantSettings(t *testing.T) {
	h := func(v int) *int { return &v }
	for _, tc := range []struct {
		tz       string
		dsh      *int
		cur, cty string
		bad      []string
	}{
		{"Europe/Helsinki", h(0), "EUR", "FI", nil},
		{"America/New_York", h(23), "USD", "US", nil},
		{"Mars/Base", h(4), "EUR", "FI", []string{"timeZone"}},
		{"Local", h(4), "EUR", "FI", []string{"timeZone"}},
		{"UTC", h(24), "EUR", "FI", []string{"dayStartHour"}},
		{"UTC", nil, "EUR", "FI", []string{"dayStartHour"}},
		{"UTC", h(-1), "eur", "fi", []string{"dayStartHour", "currency", "country"}},
		{"UTC", h(1), "XYZ", "ZZ", []string{"currency", "country"}},
		{"UTC", h(1), "EUR", "EU", []string{"country"}},
	} {
		err := ValidateRestaurantSettings(tc.tz, tc.dsh, tc.cur, tc.cty)
		if tc.bad == nil {
			if err != nil {
				t.Errorf("%v: unexpected %v", tc, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%+v accepted", tc)
			continue
		}
		for _, f := range tc.bad {
			if !strings.Contains(err.Error(), f+":") {
				t.Errorf("%+v: error %q does not name %s", tc, err, f)
			}
		}
	}
}

func TestGrantStatus(t *testing.T) {
	now := time.Now()
	g := Grant{ExpiresAt: now.Add(time.Hour)}
	if g.StatusAt(now) != "active" || g.StatusAt(now.Add(2*time.Hour)) != "expired" {
		t.Fatal("expiry")
	}
	g.RevokedAt = &now
	if g.StatusAt(now) != "revoked" {
		t.Fatal("revocation")
	}
}

func TestValidateRedirectURIs(t *testing.T) {
	for uri, ok := range map[string]bool{
		"https://partner.example/cb":     true,
		"http://127.0.0.1:8976/callback": true,
		"http://localhost/cb":            true,
		"http://partner.example/cb":      false,
		"https://partner.example/cb#x":   false,
		"/relative":                      false,
	} {
		if err := ValidateRedirectURIs([]string{uri}); (err == nil) != ok {
			t.Errorf("%s: %v", uri, err)
		}
	}
}
