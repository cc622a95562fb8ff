package store

import (
	"context"

	"partnerapi.dev/services/identity/internal/domain"
)

// Reach loads what a user owns or administers: two indexed queries.
func (s *Store) Reach(ctx context.Context, userID string) (domain.Reach, error) {
	r := domain.Reach{Restaurants: map[string]bool{}, Organizations: map[string]bool{}}
	var orgs, rests []string
	db := s.conn(ctx)
	if err := db.Raw(`SELECT organization_id::text FROM memberships WHERE user_id = ? AND organization_id IS NOT NULL AND role IN ('admin', 'owner')`, userID).Scan(&orgs).Error; err != nil {
		return r, err
	}
	if err := db.Raw(`SELECT restaurant_id::text FROM memberships WHERE user_id = ? AND restaurant_id IS NOT NULL AND role = 'owner'
		UNION SELECT x.restaurant_id::text FROM organization_restaurants x WHERE x.organization_id = ANY (CAST(? AS uuid[]))`, userID, pgTextArray(orgs)).Scan(&rests).Error; err != nil {
		return r, err
	}
	for _, o := range orgs {
		r.Organizations[o] = true
	}
	for _, id := range rests {
		r.Restaurants[id] = true
	}
	return r, nil
}

// GrantsTouching lists the grants whose snapshot names one of the reach's
// restaurants or organizations, newest first.
func (s *Store) GrantsTouching(ctx context.Context, r domain.Reach, limit int) ([]string, error) {
	var rests, orgs []string
	for id := range r.Restaurants {
		rests = append(rests, id)
	}
	for id := range r.Organizations {
		orgs = append(orgs, id)
	}
	var ids []string
	err := s.conn(ctx).Raw(`SELECT g.id::text FROM grants g WHERE g.id IN (
			SELECT gr.grant_id FROM grant_restaurants gr WHERE gr.restaurant_id = ANY (CAST(? AS uuid[]))
			UNION SELECT go.grant_id FROM grant_organizations go WHERE go.organization_id = ANY (CAST(? AS uuid[])))
		ORDER BY g.created_at DESC, g.id LIMIT ?`, pgTextArray(rests), pgTextArray(orgs), limit).Scan(&ids).Error
	return ids, err
}
