package store

import (
	"context"

	"gorm.io/gorm"

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
	// AdditionalNames are the same restaurants' names, in name order.
	AdditionalNames jsonList `gorm:"column:additional_names"`
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
			coalesce(a.ids, '[]') AS additional_ids, coalesce(a.names, '[]') AS additional_names
		FROM grant_organizations go JOIN organizations o ON o.id = go.organization_id
		LEFT JOIN LATERAL (SELECT json_agg(x.restaurant_id::text ORDER BY r.name, r.id) AS ids, json_agg(r.name ORDER BY r.name, r.id) AS names
			FROM organization_restaurants x JOIN restaurants r ON r.id = x.restaurant_id WHERE x.organization_id = o.id
				AND NOT EXISTS (SELECT 1 FROM grant_restaurants gr WHERE gr.grant_id = go.grant_id AND gr.organization_id = o.id AND gr.restaurant_id = x.restaurant_id)) a ON true
		WHERE go.grant_id = ? ORDER BY o.name, o.id`, g.ID).Scan(&orgs).Error
	out.Organizations = make([]domain.CoveredOrganization, len(orgs))
	for i, o := range orgs {
		out.Organizations[i] = domain.CoveredOrganization{OrganizationID: o.OrganizationID, Name: o.Name, Role: o.Role,
			AdditionalRestaurantIDs: o.AdditionalIDs, AdditionalRestaurantNames: o.AdditionalNames}
	}
	return out, err
}

// CoverNewRestaurants adds to an active organization grant the restaurants
// its organization has gained since approval; ErrNotFound when the grant
// does not name the organization, ErrGrantNotActive when it has ended.
func (s *Store) CoverNewRestaurants(ctx context.Context, grantID, organizationID string) (int, error) {
	var added int
	err := s.inTx(ctx, func(ctx context.Context, tx *gorm.DB) error {
		var state []struct{ Active bool }
		// The grant row's lock orders this with a revocation.
		if err := tx.Raw(`SELECT (g.revoked_at IS NULL AND g.expires_at > ?) AS active FROM grants g
			JOIN grant_organizations go ON go.grant_id = g.id AND go.organization_id = ? WHERE g.id = ? FOR UPDATE OF g`,
			s.now(), organizationID, grantID).Scan(&state).Error; err != nil {
			return err
		}
		switch {
		case len(state) == 0:
			return domain.ErrNotFound
		case !state[0].Active:
			return domain.ErrGrantNotActive
		}
		n, err := coverCurrentRestaurants(tx, grantID, []string{organizationID})
		added = int(n)
		return err
	})
	return added, err
}

// coverCurrentRestaurants adds to a grant the restaurants its
// organizations orgs have now and it does not cover yet, and answers how
// many.
func coverCurrentRestaurants(tx *gorm.DB, grantID string, orgs []string) (int64, error) {
	res := tx.Exec(`INSERT INTO grant_restaurants (grant_id, organization_id, restaurant_id)
		SELECT ?, x.organization_id, x.restaurant_id FROM organization_restaurants x WHERE x.organization_id = ANY (CAST(? AS uuid[]))
			AND NOT EXISTS (SELECT 1 FROM grant_restaurants gr WHERE gr.grant_id = ? AND gr.organization_id = x.organization_id AND gr.restaurant_id = x.restaurant_id)`,
		grantID, pgTextArray(orgs), grantID)
	return res.RowsAffected, res.Error
}
