package store

import (
	"context"
	"encoding/json"
	"time"

	"partnerapi.dev/services/identity/internal/domain"
)

type consentRow struct {
	ID              string
	SessionHash     string
	UserID          string
	ClientID        string
	Params          []byte
	Scopes          jsonList
	RestaurantIDs   jsonList `gorm:"column:restaurant_ids"`
	OrganizationIDs jsonList `gorm:"column:organization_ids"`
	ExpiresAt       time.Time
}

// SaveConsentRequest records what a consent page shows.
func (s *Store) SaveConsentRequest(ctx context.Context, c domain.ConsentRequest) error {
	params, err := json.Marshal(c.Params)
	if err != nil {
		return err
	}
	return s.conn(ctx).Exec(`INSERT INTO consent_requests (id, session_hash, user_id, client_id, params, scopes, restaurant_ids, organization_ids, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.SessionHash, c.UserID, c.ClientID, string(params), jsonList(c.Scopes), jsonList(c.RestaurantIDs), jsonList(c.OrganizationIDs), c.ExpiresAt).Error
}

// TakeConsentRequest removes and returns the consent request id shown to
// this browser session and user, if it has not expired. A request is
// taken once: a second decision on the same page finds nothing.
func (s *Store) TakeConsentRequest(ctx context.Context, id, sessionHash, userID string) (domain.ConsentRequest, error) {
	var rows []consentRow
	err := s.conn(ctx).Raw(`DELETE FROM consent_requests WHERE id = ? AND session_hash = ? AND user_id::text = ? AND expires_at > ?
		RETURNING id, session_hash, user_id::text AS user_id, client_id, params, scopes, restaurant_ids, organization_ids, expires_at`,
		id, sessionHash, userID, s.now()).Scan(&rows).Error
	if err != nil {
		return domain.ConsentRequest{}, err
	}
	if len(rows) != 1 {
		return domain.ConsentRequest{}, domain.ErrNotFound
	}
	r := rows[0]
	c := domain.ConsentRequest{ID: r.ID, SessionHash: r.SessionHash, UserID: r.UserID, ClientID: r.ClientID,
		Scopes: r.Scopes, RestaurantIDs: r.RestaurantIDs, OrganizationIDs: r.OrganizationIDs, ExpiresAt: r.ExpiresAt}
	if err := json.Unmarshal(r.Params, &c.Params); err != nil {
		return domain.ConsentRequest{}, err
	}
	return c, nil
}
