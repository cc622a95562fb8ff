package store

import (
	"context"

	"partnerapi.dev/services/identity/internal/domain"
)

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

type grantOrgRow struct {
	OrganizationID string
	Name           string
	Role           string
	AdditionalIDs  jsonList `gorm:"column:additional_ids"`
}

// Coverage loads a grant, the associations it covers and, for an
// organization boundary, its organizations: three queries.
func (s *Store) Coverage(ctx context.Context, grantID string) (domain.GrantCoverage, error) {
	g, clientStatus, err := s.Grant(ctx, grantID)
	if err != nil {
		return domain.GrantCoverage{}, err
	}
	out := domain.GrantCoverage{Grant: g, ClientStatus: clientStatus}
	var rows []coveredRow
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
	if err != nil {
		return out, err
	}
	out.Restaurants = make([]domain.CoveredRestaurant, len(rows))
	for i, r := range rows {
		out.Restaurants[i] = domain.CoveredRestaurant{OrganizationID: r.OrganizationID, Restaurant: domain.Restaurant{
			ID: r.RestaurantID, Name: r.Name, TimeZone: r.TimeZone, DayStartHour: r.DayStartHour, Currency: r.Currency, Country: r.Country,
			RegisteredName: r.RegisteredName, BusinessID: r.BusinessID, OrganizationIDs: r.OrgIDs}}
	}
	if g.Boundary != domain.BoundaryOrganization {
		return out, nil
	}
	var orgs []grantOrgRow
	err = s.conn(ctx).Raw(`SELECT o.id::text AS organization_id, o.name, go.role,
			coalesce((SELECT json_agg(x.restaurant_id::text) FROM organization_restaurants x WHERE x.organization_id = o.id
				AND NOT EXISTS (SELECT 1 FROM grant_restaurants gr WHERE gr.grant_id = go.grant_id AND gr.organization_id = o.id AND gr.restaurant_id = x.restaurant_id)), '[]') AS additional_ids
		FROM grant_organizations go JOIN organizations o ON o.id = go.organization_id
		WHERE go.grant_id = ? ORDER BY o.name, o.id`, g.ID).Scan(&orgs).Error
	out.Organizations = make([]domain.CoveredOrganization, len(orgs))
	for i, o := range orgs {
		out.Organizations[i] = domain.CoveredOrganization{OrganizationID: o.OrganizationID, Name: o.Name, Role: o.Role, AdditionalRestaurantIDs: o.AdditionalIDs}
	}
	return out, err
}
