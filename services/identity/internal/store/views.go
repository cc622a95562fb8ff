package store

import (
	"context"
	"sort"
	"time"

	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/identity/internal/domain"
)

// BusinessIdentity is a restaurant's legal identity.
type BusinessIdentity struct {
	RegisteredName string `json:"registeredName"`
	BusinessID     string `json:"businessId"`
}

// coveredRow is one (organization, restaurant) association a grant covers
// now: in its snapshot and still current. OrganizationID is empty for a
// restaurant-boundary grant.
type coveredRow struct {
	OrganizationID string
	RestaurantID   string
	Name           string
	TimeZone       string
	DayStartHour   int
	Currency       string
	Country        string
	RegisteredName string
	BusinessID     string
	OrgIDs         jsonList `gorm:"column:org_ids"`
}

// covered returns the associations a grant covers. A restaurant that left an
// organization after approval is no longer covered through it: an
// authorization only ever shrinks after approval.
func (s *Store) covered(ctx context.Context, g domain.Grant) ([]coveredRow, error) {
	var rows []coveredRow
	var err error
	if g.Boundary == domain.BoundaryRestaurant {
		err = s.conn(ctx).Raw(`SELECT '' AS organization_id, r.id::text AS restaurant_id, r.name, r.time_zone, r.day_start_hour, r.currency, r.country, r.registered_name, r.business_id,
				coalesce((SELECT json_agg(x.organization_id::text ORDER BY x.organization_id) FROM organization_restaurants x WHERE x.restaurant_id = r.id), '[]') AS org_ids
			FROM grant_restaurants gr JOIN restaurants r ON r.id = gr.restaurant_id
			WHERE gr.grant_id = ? AND gr.organization_id IS NULL ORDER BY r.name, r.id`, g.ID).Scan(&rows).Error
	} else {
		err = s.conn(ctx).Raw(`SELECT gr.organization_id::text AS organization_id, r.id::text AS restaurant_id, r.name, r.time_zone, r.day_start_hour, r.currency, r.country, r.registered_name, r.business_id, '[]' AS org_ids
			FROM grant_restaurants gr
			JOIN organization_restaurants x ON x.organization_id = gr.organization_id AND x.restaurant_id = gr.restaurant_id
			JOIN restaurants r ON r.id = gr.restaurant_id
			WHERE gr.grant_id = ? AND gr.organization_id IS NOT NULL ORDER BY r.name, r.id, gr.organization_id`, g.ID).Scan(&rows).Error
	}
	return rows, err
}

type grantOrgRow struct {
	OrganizationID string
	Name           string
	Role           string
	CurrentCount   int
	AdditionalIDs  jsonList `gorm:"column:additional_ids"`
}

func (s *Store) grantOrganizations(ctx context.Context, grantID string) ([]grantOrgRow, error) {
	var rows []grantOrgRow
	err := s.conn(ctx).Raw(`SELECT o.id::text AS organization_id, o.name, go.role,
			(SELECT count(*) FROM organization_restaurants x WHERE x.organization_id = o.id) AS current_count,
			coalesce((SELECT json_agg(x.restaurant_id::text) FROM organization_restaurants x WHERE x.organization_id = o.id
				AND NOT EXISTS (SELECT 1 FROM grant_restaurants gr WHERE gr.grant_id = go.grant_id AND gr.organization_id = o.id AND gr.restaurant_id = x.restaurant_id)), '[]') AS additional_ids
		FROM grant_organizations go JOIN organizations o ON o.id = go.organization_id
		WHERE go.grant_id = ? ORDER BY o.name, o.id`, grantID).Scan(&rows).Error
	return rows, err
}

// RestaurantItem is one element of GET /v1/restaurants.
type RestaurantItem struct {
	RestaurantID     string            `json:"restaurantId"`
	RestaurantName   string            `json:"restaurantName"`
	Role             string            `json:"role,omitempty"`
	BusinessIdentity *BusinessIdentity `json:"businessIdentity,omitempty"`
}

// Coverage tells how much of the organizations' current restaurants the
// grant covers.
type Coverage struct {
	Authorized, Current, Additional int
	ReauthorizationAvailable        bool
}

// RestaurantList is the answer of GET /v1/restaurants.
type RestaurantList struct {
	Boundary  domain.Boundary
	Items     []RestaurantItem
	Truncated bool
	Coverage  Coverage
}

// Restaurants answers GET /v1/restaurants for a grant.
func (s *Store) Restaurants(ctx context.Context, grantID string) (RestaurantList, error) {
	g, _, err := s.Grant(ctx, grantID)
	if err != nil {
		return RestaurantList{}, err
	}
	rows, err := s.covered(ctx, g)
	if err != nil {
		return RestaurantList{}, err
	}
	out := RestaurantList{Boundary: g.Boundary, Items: []RestaurantItem{}}
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r.RestaurantID] {
			continue
		}
		seen[r.RestaurantID] = true
		if len(out.Items) >= s.ListCap {
			out.Truncated = true
			continue
		}
		it := RestaurantItem{RestaurantID: r.RestaurantID, RestaurantName: r.Name}
		if g.Boundary == domain.BoundaryRestaurant {
			it.Role = "owner"
		} else {
			it.BusinessIdentity = &BusinessIdentity{RegisteredName: r.RegisteredName, BusinessID: r.BusinessID}
		}
		out.Items = append(out.Items, it)
	}
	if g.Boundary == domain.BoundaryOrganization {
		orgs, err := s.grantOrganizations(ctx, g.ID)
		if err != nil {
			return out, err
		}
		out.Coverage = coverage(seen, orgs, g.Status == "active")
	}
	return out, nil
}

func coverage(covered map[string]bool, orgs []grantOrgRow, active bool) Coverage {
	var c Coverage
	c.Authorized = len(covered)
	current := map[string]bool{}
	for id := range covered {
		current[id] = true
	}
	additional := map[string]bool{}
	for _, o := range orgs {
		for _, id := range o.AdditionalIDs {
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

// OrganizationItem is one element of GET /v1/organizations.
type OrganizationItem struct {
	OrganizationID        string                   `json:"organizationId"`
	OrganizationName      string                   `json:"organizationName"`
	Role                  string                   `json:"role"`
	Restaurants           []OrganizationRestaurant `json:"restaurants"`
	RestaurantsTruncated  bool                     `json:"restaurantsTruncated"`
	AuthorizationCoverage CoverageCamel            `json:"authorizationCoverage"`
}

// OrganizationRestaurant is a restaurant inside an organization item.
type OrganizationRestaurant struct {
	RestaurantID     string           `json:"restaurantId"`
	RestaurantName   string           `json:"restaurantName"`
	BusinessIdentity BusinessIdentity `json:"businessIdentity"`
}

// CoverageCamel is Coverage as GET /v1/organizations spells it.
type CoverageCamel struct {
	AuthorizedRestaurantCount int  `json:"authorizedRestaurantCount"`
	CurrentRestaurantCount    int  `json:"currentRestaurantCount"`
	AdditionalRestaurantCount int  `json:"additionalRestaurantCount"`
	ReauthorizationAvailable  bool `json:"reauthorizationAvailable"`
}

// OrganizationList is the data of GET /v1/organizations.
type OrganizationList struct {
	Organizations             []OrganizationItem `json:"organizations"`
	OrganizationCount         int                `json:"organizationCount"`
	AuthorizedRestaurantCount int                `json:"authorizedRestaurantCount"`
}

// Organizations answers GET /v1/organizations. A restaurant-boundary grant
// covers no organization, so it answers an empty list with zero counts.
func (s *Store) Organizations(ctx context.Context, grantID string) (OrganizationList, error) {
	out := OrganizationList{Organizations: []OrganizationItem{}}
	g, _, err := s.Grant(ctx, grantID)
	if err != nil {
		return out, err
	}
	if g.Boundary != domain.BoundaryOrganization {
		return out, nil
	}
	rows, err := s.covered(ctx, g)
	if err != nil {
		return out, err
	}
	orgs, err := s.grantOrganizations(ctx, g.ID)
	if err != nil {
		return out, err
	}
	byOrg := map[string][]coveredRow{}
	distinct := map[string]bool{}
	for _, r := range rows {
		byOrg[r.OrganizationID] = append(byOrg[r.OrganizationID], r)
		distinct[r.RestaurantID] = true
	}
	for _, o := range orgs {
		covered := map[string]bool{}
		it := OrganizationItem{OrganizationID: o.OrganizationID, OrganizationName: o.Name, Role: o.Role, Restaurants: []OrganizationRestaurant{}}
		for _, r := range byOrg[o.OrganizationID] {
			covered[r.RestaurantID] = true
			if len(it.Restaurants) >= s.ListCap {
				it.RestaurantsTruncated = true
				continue
			}
			it.Restaurants = append(it.Restaurants, OrganizationRestaurant{RestaurantID: r.RestaurantID, RestaurantName: r.Name, BusinessIdentity: BusinessIdentity{RegisteredName: r.RegisteredName, BusinessID: r.BusinessID}})
		}
		c := coverage(covered, []grantOrgRow{o}, g.Status == "active")
		it.AuthorizationCoverage = CoverageCamel{c.Authorized, c.Current, c.Additional, c.ReauthorizationAvailable}
		out.Organizations = append(out.Organizations, it)
	}
	out.OrganizationCount = len(orgs)
	out.AuthorizedRestaurantCount = len(distinct)
	return out, nil
}

// InternalGrantView builds the gateway's view in three queries (grant with
// client, covered restaurants, revoked tokens) plus one for organization
// grants.
func (s *Store) InternalGrantView(ctx context.Context, grantID string) (contracts.Grant, error) {
	g, clientStatus, err := s.Grant(ctx, grantID)
	if err != nil {
		return contracts.Grant{}, err
	}
	rows, err := s.covered(ctx, g)
	if err != nil {
		return contracts.Grant{}, err
	}
	out := contracts.Grant{GrantID: g.ID, ClientID: g.ClientID, ClientStatus: clientStatus, UserID: g.UserID, Status: g.Status,
		ExpiresAt: g.ExpiresAt.UTC().Truncate(time.Second), Scopes: g.Scopes, Boundary: string(g.Boundary),
		Restaurants: []contracts.GrantRestaurant{}, Organizations: []contracts.GrantOrganization{}}
	if out.Scopes == nil {
		out.Scopes = []string{}
	}
	if out.RevokedTokenFamilies, out.RevokedTokenIDs, err = s.Revocations(ctx, g.ID); err != nil {
		return out, err
	}
	idx := map[string]int{}
	orgIdx := map[string]int{}
	if g.Boundary == domain.BoundaryOrganization {
		var orgIDs []string
		if err := s.conn(ctx).Raw(`SELECT go.organization_id::text FROM grant_organizations go WHERE go.grant_id = ? ORDER BY 1`, g.ID).Scan(&orgIDs).Error; err != nil {
			return out, err
		}
		for _, id := range orgIDs {
			orgIdx[id] = len(out.Organizations)
			out.Organizations = append(out.Organizations, contracts.GrantOrganization{OrganizationID: id, RestaurantIDs: []string{}})
		}
	}
	for _, r := range rows {
		i, ok := idx[r.RestaurantID]
		if !ok {
			i = len(out.Restaurants)
			idx[r.RestaurantID] = i
			orgs := []string(r.OrgIDs)
			if g.Boundary == domain.BoundaryOrganization || orgs == nil {
				orgs = []string{}
			}
			out.Restaurants = append(out.Restaurants, contracts.GrantRestaurant{RestaurantID: r.RestaurantID, TimeZone: r.TimeZone, DayStartHour: r.DayStartHour, Currency: r.Currency, Country: r.Country, OrganizationIDs: orgs})
		}
		if r.OrganizationID != "" {
			out.Restaurants[i].OrganizationIDs = append(out.Restaurants[i].OrganizationIDs, r.OrganizationID)
			if j, ok := orgIdx[r.OrganizationID]; ok {
				out.Organizations[j].RestaurantIDs = append(out.Organizations[j].RestaurantIDs, r.RestaurantID)
			}
		}
	}
	for i := range out.Restaurants {
		sort.Strings(out.Restaurants[i].OrganizationIDs)
	}
	return out, nil
}
