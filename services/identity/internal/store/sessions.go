package store

import (
	"context"
	"time"

	"partnerapi.dev/services/identity/internal/domain"
)

// StartSession records a signed-in browser session.
func (s *Store) StartSession(ctx context.Context, idHash string, userID string, idle, max time.Duration) error {
	now := s.now()
	return s.conn(ctx).Exec(`INSERT INTO browser_sessions (id_hash, user_id, created_at, last_seen_at, idle_expires_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?)`, idHash, userID, now, now, now.Add(min(idle, max)), now.Add(max)).Error
}

// TouchSession finds a live session and moves its idle expiry in the same
// statement: one round trip per page.
func (s *Store) TouchSession(ctx context.Context, idHash string, idle time.Duration) (string, error) {
	now := s.now()
	var users []string
	err := s.conn(ctx).Raw(`UPDATE browser_sessions SET last_seen_at = ?, idle_expires_at = LEAST(?, expires_at)
		WHERE id_hash = ? AND idle_expires_at > ? AND expires_at > ? RETURNING user_id::text`,
		now, now.Add(idle), idHash, now, now).Scan(&users).Error
	if err != nil {
		return "", err
	}
	if len(users) == 0 {
		return "", domain.ErrNotFound
	}
	return users[0], nil
}

// EndSession deletes one session; ending one that has ended is no error.
func (s *Store) EndSession(ctx context.Context, idHash string) error {
	return s.conn(ctx).Exec(`DELETE FROM browser_sessions WHERE id_hash = ?`, idHash).Error
}

// EndUserSessions deletes every session of a user.
func (s *Store) EndUserSessions(ctx context.Context, userID string) (int64, error) {
	res := s.conn(ctx).Exec(`DELETE FROM browser_sessions WHERE user_id = ?`, userID)
	return res.RowsAffected, res.Error
}
