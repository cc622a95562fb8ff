package store

import (
	"context"
	"time"

	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/identity/internal/domain"
)

// GrantChanges reads the rows the triggers of migration 12 write. The
// clock is read before the rows, so a change committed in between is in
// this answer or the next.
func (s *Store) GrantChanges(ctx context.Context, since time.Time, overlap time.Duration, limit int) (domain.GrantChanges, error) {
	out := domain.GrantChanges{Changes: []contracts.GrantChange{}}
	if err := s.conn(ctx).Raw(`SELECT clock_timestamp()`).Scan(&out.Now).Error; err != nil {
		return out, err
	}
	if since.IsZero() {
		return out, nil
	}
	var rows []struct {
		Seq      int64
		GrantID  *string
		ClientID *string
	}
	err := s.conn(ctx).Raw(`SELECT seq, grant_id::text AS grant_id, client_id FROM grant_changes WHERE changed_at > ? ORDER BY seq LIMIT ?`,
		since.Add(-overlap), limit+1).Scan(&rows).Error
	if err != nil {
		return out, err
	}
	if len(rows) > limit {
		out.Reset = true
		return out, nil
	}
	for _, r := range rows {
		c := contracts.GrantChange{Seq: r.Seq}
		if r.GrantID != nil {
			c.GrantID = *r.GrantID
		}
		if r.ClientID != nil {
			c.ClientID = *r.ClientID
		}
		out.Changes = append(out.Changes, c)
	}
	return out, nil
}
