package store

import (
	"context"

	"gorm.io/gorm"

	"partnerapi.dev/services/identity/internal/domain"
)

// The operator's lists page by primary key (keyset): a page costs an index
// range scan however deep it is, and rows written meanwhile never shift
// one page's rows into the next.

// ListOrganizations returns organizations by id after the id after.
func (s *Store) ListOrganizations(ctx context.Context, after string, limit int) ([]domain.Organization, error) {
	out := []domain.Organization{}
	err := keyset(s.conn(ctx).Table("organizations").Select("id::text AS id, name, registered_name, business_id"), "id", after, limit).Scan(&out).Error
	return out, err
}

// ListRestaurants returns restaurants with their organizations by id after
// the id after.
func (s *Store) ListRestaurants(ctx context.Context, after string, limit int) ([]domain.Restaurant, error) {
	// The row has only columns: gorm cannot map domain.Restaurant's
	// []string and would log an error for it on every list.
	var rows []struct {
		ID, Name, TimeZone                            string
		DayStartHour                                  int
		Currency, Country, RegisteredName, BusinessID string
		OrgIDs                                        jsonList `gorm:"column:org_ids"`
	}
	q := s.conn(ctx).Table("restaurants r").Select(`r.id::text AS id, r.name, r.time_zone, r.day_start_hour, r.currency, r.country, r.registered_name, r.business_id,
		coalesce((SELECT json_agg(x.organization_id::text ORDER BY x.organization_id) FROM organization_restaurants x WHERE x.restaurant_id = r.id), '[]') AS org_ids`)
	err := keyset(q, "r.id", after, limit).Scan(&rows).Error
	out := make([]domain.Restaurant, len(rows))
	for i, r := range rows {
		out[i] = domain.Restaurant{ID: r.ID, Name: r.Name, TimeZone: r.TimeZone, DayStartHour: r.DayStartHour, Currency: r.Currency,
			Country: r.Country, RegisteredName: r.RegisteredName, BusinessID: r.BusinessID, OrganizationIDs: r.OrgIDs}
	}
	return out, err
}

// ListUsers returns users by id after the id after, without their password
// hashes: the query does not read them.
func (s *Store) ListUsers(ctx context.Context, after string, limit int) ([]domain.User, error) {
	out := []domain.User{}
	err := keyset(s.conn(ctx).Table("users").Select("id::text AS id, email, name"), "id", after, limit).Scan(&out).Error
	return out, err
}

// ListMemberships returns memberships by id after the id after.
func (s *Store) ListMemberships(ctx context.Context, after int64, limit int) ([]domain.Membership, error) {
	out := []domain.Membership{}
	q := s.conn(ctx).Table("memberships").Select("id, user_id::text AS user_id, coalesce(restaurant_id::text, '') AS restaurant_id, coalesce(organization_id::text, '') AS organization_id, role")
	var key any
	if after > 0 {
		key = after
	}
	err := keyset(q, "id", key, limit).Scan(&out).Error
	return out, err
}

// keyset orders q by the key column and keeps limit rows after the key
// after; a zero after ("" or nil) starts at the first row.
func keyset(q *gorm.DB, column string, after any, limit int) *gorm.DB {
	if after != nil && after != "" {
		q = q.Where(column+" > ?", after)
	}
	return q.Order(column).Limit(limit)
}
