package api

import (
	"slices"
	"time"

	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/identity/internal/domain"
)

// businessIdentity is a restaurant's legal identity.
type businessIdentity struct {
	RegisteredName string `json:"registeredName"`
	BusinessID     string `json:"businessId"`
}

// restaurantItem is one element of GET /v1/restaurants.
type restaurantItem struct {
	RestaurantID     string            `json:"restaurantId"`
	RestaurantName   string            `json:"restaurantName"`
	Role             string            `json:"role,omitempty"`
	BusinessIdentity *businessIdentity `json:"businessIdentity,omitempty"`
}

// coverage tells how much of the organizations' current restaurants a grant
// covers.
type coverage struct {
	Authorized, Current, Additional int
	ReauthorizationAvailable        bool
}

// restaurantList is the answer of GET /v1/restaurants.
type restaurantList struct {
	Boundary  domain.Boundary
	Items     []restaurantItem
	Truncated bool
	Coverage  coverage
}

func restaurantsView(cov domain.GrantCoverage, listCap int) restaurantList {
	g := cov.Grant
	out := restaurantList{Boundary: g.Boundary, Items: []restaurantItem{}}
	seen := map[string]bool{}
	for _, r := range cov.Restaurants {
		if seen[r.ID] {
			continue
		}
		seen[r.ID] = true
		if len(out.Items) >= listCap {
			out.Truncated = true
			continue
		}
		it := restaurantItem{RestaurantID: r.ID, RestaurantName: r.Name}
		if g.Boundary == domain.BoundaryRestaurant {
			it.Role = "owner"
		} else {
			it.BusinessIdentity = &businessIdentity{RegisteredName: r.RegisteredName, BusinessID: r.BusinessID}
		}
		out.Items = append(out.Items, it)
	}
	if g.Boundary == domain.BoundaryOrganization {
		out.Coverage = coverageOf(seen, cov.Organizations, g.Status == "active")
	}
	return out
}

func coverageOf(covered map[string]bool, orgs []domain.CoveredOrganization, active bool) coverage {
	var c coverage
	c.Authorized = len(covered)
	current := map[string]bool{}
	for id := range covered {
		current[id] = true
	}
	additional := map[string]bool{}
	for _, o := range orgs {
		for _, id := range o.AdditionalRestaurantIDs {
			current[id] = true
			if !covered[id] {
				additional[id] = true
			}
		}
	}
	c.Current = len(current)
	c.Additional = len(additional)
	c.ReauthorizationAvailable = c.Additional > 0 && active
	return c
}

// organizationItem is one element of GET /v1/organizations.
type organizationItem struct {
	OrganizationID        string                   `json:"organizationId"`
	OrganizationName      string                   `json:"organizationName"`
	Role                  string                   `json:"role"`
	Restaurants           []organizationRestaurant `json:"restaurants"`
	RestaurantsTruncated  bool                     `json:"restaurantsTruncated"`
	AuthorizationCoverage coverageCamel            `json:"authorizationCoverage"`
}

// organizationRestaurant is a restaurant inside an organization item.
type organizationRestaurant struct {
	RestaurantID     string           `json:"restaurantId"`
	RestaurantName   string           `json:"restaurantName"`
	BusinessIdentity businessIdentity `json:"businessIdentity"`
}

// coverageCamel is coverage as GET /v1/organizations spells it.
type coverageCamel struct {
	AuthorizedRestaurantCount int  `json:"authorizedRestaurantCount"`
	CurrentRestaurantCount    int  `json:"currentRestaurantCount"`
	AdditionalRestaurantCount int  `json:"additionalRestaurantCount"`
	ReauthorizationAvailable  bool `json:"reauthorizationAvailable"`
}

// organizationList is the data of GET /v1/organizations.
type organizationList struct {
	Organizations             []organizationItem `json:"organizations"`
	OrganizationCount         int                `json:"organizationCount"`
	AuthorizedRestaurantCount int                `json:"authorizedRestaurantCount"`
}

// organizationsView answers GET /v1/organizations. A restaurant-boundary
// grant covers no organization: an empty list with zero counts.
func organizationsView(cov domain.GrantCoverage, listCap int) organizationList {
	out := organizationList{Organizations: []organizationItem{}}
	if cov.Grant.Boundary != domain.BoundaryOrganization {
		return out
	}
	byOrg := map[string][]domain.CoveredRestaurant{}
	distinct := map[string]bool{}
	for _, r := range cov.Restaurants {
		byOrg[r.OrganizationID] = append(byOrg[r.OrganizationID], r)
		distinct[r.ID] = true
	}
	for _, o := range cov.Organizations {
		covered := map[string]bool{}
		it := organizationItem{OrganizationID: o.OrganizationID, OrganizationName: o.Name, Role: o.Role, Restaurants: []organizationRestaurant{}}
		for _, r := range byOrg[o.OrganizationID] {
			covered[r.ID] = true
			if len(it.Restaurants) >= listCap {
				it.RestaurantsTruncated = true
				continue
			}
			it.Restaurants = append(it.Restaurants, organizationRestaurant{RestaurantID: r.ID, RestaurantName: r.Name, BusinessIdentity: businessIdentity{RegisteredName: r.RegisteredName, BusinessID: r.BusinessID}})
		}
		c := coverageOf(covered, []domain.CoveredOrganization{o}, cov.Grant.Status == "active")
		it.AuthorizationCoverage = coverageCamel{c.Authorized, c.Current, c.Additional, c.ReauthorizationAvailable}
		out.Organizations = append(out.Organizations, it)
	}
	out.OrganizationCount = len(cov.Organizations)
	out.AuthorizedRestaurantCount = len(distinct)
	return out
}

// grantView is the gateway's view of a grant (the shared contract).
func grantView(cov domain.GrantCoverage, revokedFamilies, revokedIDs []string) contracts.Grant {
	g := cov.Grant
	out := contracts.Grant{GrantID: g.ID, ClientID: g.ClientID, ClientStatus: cov.ClientStatus, UserID: g.UserID, Status: g.Status,
		ExpiresAt: g.ExpiresAt.UTC().Truncate(time.Second), Scopes: g.Scopes, Boundary: string(g.Boundary),
		Restaurants: []contracts.GrantRestaurant{}, Organizations: []contracts.GrantOrganization{},
		RevokedTokenFamilies: revokedFamilies, RevokedTokenIDs: revokedIDs}
	if out.Scopes == nil {
		out.Scopes = []string{}
	}
	orgIdx := map[string]int{}
	orgIDs := make([]string, len(cov.Organizations))
	for i, o := range cov.Organizations {
		orgIDs[i] = o.OrganizationID
	}
	slices.Sort(orgIDs)
	for _, id := range orgIDs {
		orgIdx[id] = len(out.Organizations)
		out.Organizations = append(out.Organizations, contracts.GrantOrganization{OrganizationID: id, RestaurantIDs: []string{}})
	}
	idx := map[string]int{}
	for _, r := range cov.Restaurants {
		i, ok := idx[r.ID]
		if !ok {
			i = len(out.Restaurants)
			idx[r.ID] = i
			orgs := r.OrganizationIDs
			if g.Boundary == domain.BoundaryOrganization || orgs == nil {
				orgs = []string{}
			}
			out.Restaurants = append(out.Restaurants, contracts.GrantRestaurant{RestaurantID: r.ID, TimeZone: r.TimeZone, DayStartHour: r.DayStartHour, Currency: r.Currency, Country: r.Country, OrganizationIDs: orgs})
		}
		if r.OrganizationID != "" {
			out.Restaurants[i].OrganizationIDs = append(out.Restaurants[i].OrganizationIDs, r.OrganizationID)
			if j, ok := orgIdx[r.OrganizationID]; ok {
				out.Organizations[j].RestaurantIDs = append(out.Organizations[j].RestaurantIDs, r.ID)
			}
		}
	}
	for i := range out.Restaurants {
		slices.Sort(out.Restaurants[i].OrganizationIDs)
	}
	return out
}
