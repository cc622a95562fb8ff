package domain

import (
	"slices"
	"testing"
)

func TestReachSeesAndOutside(t *testing.T) {
	r := Reach{Restaurants: map[string]bool{"a": true, "b": true}, Organizations: map[string]bool{"north": true}}
	rest := func(id, name, org string) CoveredRestaurant {
		return CoveredRestaurant{OrganizationID: org, Restaurant: Restaurant{ID: id, Name: name}}
	}
	for _, c := range []struct {
		name    string
		cov     GrantCoverage
		sees    bool
		outside []string
	}{
		{"own restaurant", GrantCoverage{Restaurants: []CoveredRestaurant{rest("a", "Alpha", "")}}, true, nil},
		{"someone else's restaurant", GrantCoverage{Restaurants: []CoveredRestaurant{rest("x", "Xeno", "")}}, false, []string{"Xeno"}},
		{"own organization, now empty", GrantCoverage{Organizations: []CoveredOrganization{{OrganizationID: "north", Name: "North"}}}, true, nil},
		{"organizations partly own", GrantCoverage{
			Restaurants:   []CoveredRestaurant{rest("b", "Beta", "north"), rest("c", "Gamma", "south"), rest("c", "Gamma", "north")},
			Organizations: []CoveredOrganization{{OrganizationID: "north", Name: "North"}, {OrganizationID: "south", Name: "South"}},
		}, true, []string{"Gamma", "South"}},
	} {
		if got := r.Sees(c.cov); got != c.sees {
			t.Errorf("%s: sees %v, want %v", c.name, got, c.sees)
		}
		if got := r.Outside(c.cov); !slices.Equal(got, c.outside) {
			t.Errorf("%s: outside %v, want %v", c.name, got, c.outside)
		}
	}
}
