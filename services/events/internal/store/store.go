// Package store keeps the events schema with gorm: the counter row per
// restaurant that numbers its events, the log partitioned by day, the ids
// already appended, and the retention that drops old days. It implements
// domain.Repository; Listener implements domain.Notifier over Postgres
// LISTEN/NOTIFY so long polls wake on any replica's append.
package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"partnerapi.dev/pkg/database"

	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/events/internal/domain"
	"partnerapi.dev/services/events/internal/sealed"
)

// Channel is the NOTIFY channel an append signals, with the restaurant id
// as payload.
const Channel = "events_appended"

// Store is the events service's repository.
type Store struct {
	DB *gorm.DB
	// Reads, when set, serves the feed from a streaming replica that has
	// replayed every event committed before the read began.
	Reads *database.Reads
	// Now is the clock of stored times (time.Now when nil); tests move it.
	Now func() time.Time
	// Secrets seals the endpoints' signing secrets at rest.
	Secrets *sealed.Keyring

	mu    sync.Mutex
	ready map[string]bool // day partitions known to exist
}

var _ domain.Repository = (*Store)(nil)

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

type eventRow struct {
	RestaurantID string
	Seq          int64
	ID           string
	Type         string
	Source       string
	OccurredAt   time.Time
	StoredAt     time.Time
	Data         []byte
	// ClientID, GrantID and UserID are the partner request's
	// authorization (contracts.EventActor), never shown to partners.
	ClientID, GrantID, UserID *string
}

func (eventRow) TableName() string { return "events" }

// Append stores the new events of batch in one transaction (see AppendTx).
func (s *Store) Append(ctx context.Context, source string, batch []contracts.EventRecord) (domain.AppendResult, error) {
	now := s.now()
	// Tomorrow too: a restaurant's stored time never goes back (AppendTx),
	// so near midnight it may already be tomorrow's.
	if err := s.ensureDays(ctx, day(now), day(now).AddDate(0, 0, 1)); err != nil {
		return domain.AppendResult{}, err
	}
	var res domain.AppendResult
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		res, err = AppendTx(tx, now, source, batch)
		return err
	})
	return res, err
}

// AppendTx appends batch inside tx, which the caller commits or rolls back:
// ids already stored are skipped; then, restaurant by restaurant in id order
// (so two appends never wait on each other's rows in a cycle), the counter
// row is taken and the restaurant's new events numbered contiguously in the
// order given. The row lock is held until tx ends, so a restaurant's events
// commit in the order of their numbers, and a rollback gives the numbers
// back to the next append.
func AppendTx(tx *gorm.DB, now time.Time, source string, batch []contracts.EventRecord) (domain.AppendResult, error) {
	var res domain.AppendResult
	// Retention drops partitions under an exclusive lock of the log; taking
	// the log's lock before any counter row means an append and a retention
	// never hold what the other waits for.
	if err := tx.Exec(`LOCK TABLE events IN ROW EXCLUSIVE MODE`).Error; err != nil {
		return res, err
	}
	// Ids in sorted order for the same reason as the counter rows: two
	// relays resending overlapping batches queue instead of deadlocking.
	ids := make([]contracts.EventRecord, len(batch))
	copy(ids, batch)
	slices.SortFunc(ids, func(a, b contracts.EventRecord) int { return strings.Compare(a.ID, b.ID) })
	var q strings.Builder
	args := make([]any, 0, 3*len(ids))
	q.WriteString(`INSERT INTO event_ids (id, restaurant_id, stored_at) VALUES `)
	for i, e := range ids {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteString(`(?, ?, ?)`)
		args = append(args, e.ID, e.RestaurantID, now)
	}
	q.WriteString(` ON CONFLICT (id) DO NOTHING RETURNING id`)
	var fresh []string
	if err := tx.Raw(q.String(), args...).Scan(&fresh).Error; err != nil {
		return res, err
	}
	isNew := make(map[string]bool, len(fresh))
	for _, id := range fresh {
		isNew[id] = true
	}
	byRestaurant := map[string][]contracts.EventRecord{}
	for _, e := range batch {
		if isNew[e.ID] {
			byRestaurant[e.RestaurantID] = append(byRestaurant[e.RestaurantID], e)
		}
	}
	res.Duplicates = len(batch) - len(fresh)
	res.Appended = len(fresh)
	restaurants := make([]string, 0, len(byRestaurant))
	for r := range byRestaurant {
		restaurants = append(restaurants, r)
	}
	slices.Sort(restaurants)
	res.Restaurants = restaurants
	rows := make([]eventRow, 0, len(fresh))
	for _, r := range restaurants {
		evs := byRestaurant[r]
		// The stored time never goes back within a restaurant, so dropping
		// the oldest days drops the lowest numbers and what is kept stays
		// contiguous, whatever the replicas' clocks say.
		var head struct {
			LastSeq      int64
			LastStoredAt time.Time
		}
		// One round trip: the counter row; the day's first number when this
		// is the restaurant's first append of the day (see Page; later ones
		// find the row there); and the notification, delivered when (and
		// only if) the transaction commits.
		err := tx.Raw(`WITH c AS (
  INSERT INTO counters AS c (restaurant_id, last_seq, last_stored_at) VALUES (?, ?, ?)
  ON CONFLICT (restaurant_id) DO UPDATE SET last_seq = c.last_seq + EXCLUDED.last_seq,
         last_stored_at = greatest(c.last_stored_at, EXCLUDED.last_stored_at)
  RETURNING last_seq, last_stored_at
), d AS (
  INSERT INTO event_days (restaurant_id, day, first_seq)
  SELECT ?::uuid, (last_stored_at AT TIME ZONE 'UTC')::date, last_seq - ? + 1 FROM c
  ON CONFLICT DO NOTHING
)
SELECT c.last_seq, c.last_stored_at FROM c, (SELECT pg_notify(?, ?)) n`, r, len(evs), now, r, len(evs), Channel, r).Scan(&head).Error
		if err != nil {
			return res, err
		}
		first := head.LastSeq - int64(len(evs)) + 1
		for i, e := range evs {
			row := eventRow{RestaurantID: r, Seq: first + int64(i), ID: e.ID, Type: e.Type, Source: source,
				OccurredAt: e.OccurredAt, StoredAt: head.LastStoredAt, Data: e.Data}
			if a := e.Actor; a != nil {
				row.ClientID, row.GrantID, row.UserID = &a.ClientID, &a.GrantID, &a.UserID
			}
			rows = append(rows, row)
		}
	}
	if len(rows) > 0 {
		if err := tx.CreateInBatches(rows, 200).Error; err != nil {
			return res, err
		}
		if err := recordRevocations(tx, now, rows); err != nil {
			return res, err
		}
		if err := enqueueDeliveries(tx, now, rows); err != nil {
			return res, err
		}
	}
	return res, nil
}

// Page reads, in one repeatable-read snapshot, up to ScanWindow numbers and
// types after after, the restaurant's range, then the bodies pick chooses.
// The log's lock is taken before the snapshot (LOCK TABLE is the one
// statement that does not take it): otherwise a retention committing in
// between would leave a snapshot with the old oldest_seq over a partition
// list without the dropped days, a hole the reader would skip.
func (s *Store) Page(ctx context.Context, restaurantID string, after int64, pick func(domain.Head, []domain.Scanned) []int64) (domain.Head, []domain.Event, error) {
	head := domain.Head{OldestSeq: 1}
	var out []domain.Event
	db := s.DB.WithContext(ctx)
	if s.Reads != nil {
		db = s.Reads.Gorm(ctx)
	}
	err := db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(`LOCK TABLE events IN ACCESS SHARE MODE`).Error; err != nil {
			return err
		}
		// The restaurant's range and its days in one round trip.
		var days []struct {
			LastSeq   int64
			OldestSeq int64
			Day       *time.Time
			FirstSeq  int64
		}
		if err := tx.Raw(`SELECT c.last_seq, c.oldest_seq, d.day, coalesce(d.first_seq, 0) AS first_seq FROM counters c
LEFT JOIN event_days d ON d.restaurant_id = c.restaurant_id WHERE c.restaurant_id = ? ORDER BY d.day`, restaurantID).Scan(&days).Error; err != nil {
			return err
		}
		if len(days) > 0 {
			head = domain.Head{HeadSeq: days[0].LastSeq, OldestSeq: days[0].OldestSeq}
		}
		if after == domain.FromOldest {
			after = head.OldestSeq - 1
		}
		from, to := time.Unix(0, 0).UTC(), maxTime
		for _, d := range days {
			if d.Day == nil {
				continue
			}
			if from, to = storedRange(from, to, *d.Day, d.FirstSeq, after); !to.Equal(maxTime) {
				break
			}
		}
		// Up to 1,000 rows of two columns: scanned by hand, as gorm's
		// reflective Scan cost more than the query.
		cur, err := tx.Raw(`SELECT seq, type FROM events WHERE restaurant_id = ? AND seq > ? AND stored_at >= ? AND stored_at < ? ORDER BY seq LIMIT ?`,
			restaurantID, after, from, to, domain.ScanWindow).Rows()
		if err != nil {
			return err
		}
		defer cur.Close()
		scanned := make([]domain.Scanned, 0, 64)
		for cur.Next() {
			var x domain.Scanned
			if err := cur.Scan(&x.Seq, &x.Type); err != nil {
				return err
			}
			scanned = append(scanned, x)
		}
		if err := cur.Err(); err != nil {
			return err
		}
		seqs := pick(head, scanned)
		if len(seqs) == 0 {
			return nil
		}
		// Scanned by hand like the numbers; the range of seqs lets the
		// index read one stretch instead of one descent per number.
		body, err := tx.Raw(`SELECT id, type, seq, occurred_at, data FROM events
WHERE restaurant_id = ? AND seq BETWEEN ? AND ? AND seq IN ? AND stored_at >= ? AND stored_at < ? ORDER BY seq`,
			restaurantID, slices.Min(seqs), slices.Max(seqs), seqs, from, to).Rows()
		if err != nil {
			return err
		}
		defer body.Close()
		out = make([]domain.Event, 0, len(seqs))
		for body.Next() {
			x := domain.Event{RestaurantID: restaurantID}
			var data []byte
			if err := body.Scan(&x.ID, &x.Type, &x.Seq, &x.OccurredAt, &data); err != nil {
				return err
			}
			x.OccurredAt, x.Data = x.OccurredAt.UTC(), data
			out = append(out, x)
		}
		if err := body.Err(); err != nil {
			return err
		}
		return nil
	}, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	return head, out, err
}

// maxTime is the open end of a page's stored-time range.
var maxTime = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// storedRange narrows [from, to), the stored times of the restaurant's
// events after+1 … after+ScanWindow, with one of its event_days rows, taken
// in day order: the range starts at the day holding after+1 (the last day
// starting at or before it) and ends at the first day starting after
// after+ScanWindow. Stored times never go back within a restaurant, so
// every event of that number range is inside, and Postgres plans only the
// partitions of those days.
func storedRange(from, to, d time.Time, firstSeq, after int64) (time.Time, time.Time) {
	start := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
	switch {
	case firstSeq <= after+1:
		return start, to
	case firstSeq > after+domain.ScanWindow:
		return from, start
	}
	return from, to
}

// day is the start (UTC) of t's day.
func day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

func partitionName(d time.Time) string { return "events_" + d.Format("20060102") }

// ensureDays creates the day partitions of days that this process has not
// seen yet.
func (s *Store) ensureDays(ctx context.Context, days ...time.Time) error {
	for _, d := range days {
		name := partitionName(d)
		s.mu.Lock()
		known := s.ready[name]
		s.mu.Unlock()
		if known {
			continue
		}
		stmt := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s PARTITION OF events FOR VALUES FROM ('%s') TO ('%s')`,
			name, d.Format(time.RFC3339), d.AddDate(0, 0, 1).Format(time.RFC3339))
		if err := s.DB.WithContext(ctx).Exec(stmt).Error; err != nil {
			// Another replica may have created it at the same moment.
			if exists, qerr := s.partitionExists(ctx, name); qerr != nil || !exists {
				return err
			}
		}
		s.mu.Lock()
		if s.ready == nil {
			s.ready = map[string]bool{}
		}
		s.ready[name] = true
		s.mu.Unlock()
	}
	return nil
}

func (s *Store) partitionExists(ctx context.Context, name string) (bool, error) {
	var n int64
	err := s.DB.WithContext(ctx).Raw(`SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relname = ?`, name).Scan(&n).Error
	return n > 0, err
}

// DaysAhead is how many days of partitions retention keeps created ahead.
const DaysAhead = 3

// RetentionResult tells what one retention step did.
type RetentionResult struct {
	Created []string
	Dropped []string
}

// Retention creates the partitions of today and the next DaysAhead days and
// drops the days that ended before now minus domain.Retention. In the same
// transaction as the drop, each restaurant's oldest_seq moves to its oldest
// kept event and the ids of dropped days are forgotten. It takes the log's
// exclusive lock, so appends and feed reads wait for it (a moment, once a
// day).
func (s *Store) Retention(ctx context.Context, now time.Time) (RetentionResult, error) {
	var res RetentionResult
	today := day(now)
	for i := 0; i <= DaysAhead; i++ {
		d := today.AddDate(0, 0, i)
		exists, err := s.partitionExists(ctx, partitionName(d))
		if err != nil {
			return res, err
		}
		if err := s.ensureDays(ctx, d); err != nil {
			return res, err
		}
		if !exists {
			res.Created = append(res.Created, partitionName(d))
		}
	}
	var names []string
	if err := s.DB.WithContext(ctx).Raw(`SELECT c.relname FROM pg_inherits i
JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
JOIN pg_namespace n ON n.oid = p.relnamespace
WHERE p.relname = 'events' AND n.nspname = current_schema() ORDER BY c.relname`).Scan(&names).Error; err != nil {
		return res, err
	}
	cutoff := now.UTC().Add(-domain.Retention)
	// Finished deliveries are history kept as long as the log.
	if err := s.DB.WithContext(ctx).Exec(`DELETE FROM webhook_deliveries WHERE status <> 'pending' AND created_at < ?`, cutoff).Error; err != nil {
		return res, err
	}
	var drop []string
	keepFrom := time.Time{}
	for _, n := range names {
		d, err := time.Parse("20060102", strings.TrimPrefix(n, "events_"))
		if err != nil {
			continue // not one of ours
		}
		if !d.AddDate(0, 0, 1).After(cutoff) {
			drop = append(drop, n)
			keepFrom = d.AddDate(0, 0, 1)
		}
	}
	if len(drop) == 0 {
		return res, nil
	}
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(`LOCK TABLE events IN ACCESS EXCLUSIVE MODE`).Error; err != nil {
			return err
		}
		for _, n := range drop {
			if err := tx.Exec(`DROP TABLE IF EXISTS ` + n).Error; err != nil {
				return err
			}
		}
		if err := tx.Exec(`UPDATE counters c SET oldest_seq = COALESCE(
  (SELECT min(e.seq) FROM events e WHERE e.restaurant_id = c.restaurant_id), c.last_seq + 1)
WHERE c.oldest_seq <> COALESCE((SELECT min(e.seq) FROM events e WHERE e.restaurant_id = c.restaurant_id), c.last_seq + 1)`).Error; err != nil {
			return err
		}
		if err := tx.Exec(`DELETE FROM event_days WHERE day < ?`, keepFrom.Format(time.DateOnly)).Error; err != nil {
			return err
		}
		return tx.Exec(`DELETE FROM event_ids WHERE stored_at < ?`, keepFrom).Error
	})
	if err != nil {
		return res, err
	}
	s.mu.Lock()
	for _, n := range drop {
		delete(s.ready, n)
	}
	s.mu.Unlock()
	res.Dropped = drop
	return res, nil
}

// GrantEvents lists each grant's events on the restaurants, newest first,
// at most limit per grant: one statement, one walk of the index
// events_grant_recent per grant.
func (s *Store) GrantEvents(ctx context.Context, grantIDs []string, restaurantIDs []string, limit int) (map[string][]contracts.ActivityEvent, error) {
	var rows []struct {
		GrantID, ID, Type, RestaurantID string
		OccurredAt                      time.Time
		UserID                          *string
		Data                            []byte
	}
	err := s.DB.WithContext(ctx).Raw(`SELECT e.grant_id, e.id, e.type, e.restaurant_id::text AS restaurant_id, e.occurred_at, e.user_id, e.data
		FROM unnest(CAST(? AS text[])) AS g(id)
		CROSS JOIN LATERAL (SELECT grant_id, id, type, restaurant_id, occurred_at, user_id, data, stored_at, seq FROM events
			WHERE grant_id = g.id AND restaurant_id = ANY (CAST(? AS uuid[])) ORDER BY stored_at DESC, seq DESC LIMIT ?) e
		ORDER BY e.grant_id, e.stored_at DESC, e.seq DESC`,
		"{"+strings.Join(grantIDs, ",")+"}", "{"+strings.Join(restaurantIDs, ",")+"}", limit).Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	out := map[string][]contracts.ActivityEvent{}
	for _, r := range rows {
		e := contracts.ActivityEvent{ID: r.ID, Type: r.Type, RestaurantID: r.RestaurantID, OccurredAt: r.OccurredAt.UTC(), Data: r.Data}
		if r.UserID != nil {
			e.UserID = *r.UserID
		}
		out[r.GrantID] = append(out[r.GrantID], e)
	}
	return out, nil
}

// ClientEndpoints lists the clients' webhook endpoints on the restaurants
// (client ids are quoted in the array: identity allows only letters,
// digits, dot, underscore and hyphen in them).
func (s *Store) ClientEndpoints(ctx context.Context, clientIDs []string, restaurantIDs []string) ([]domain.EndpointAddress, error) {
	var out []domain.EndpointAddress
	err := s.DB.WithContext(ctx).Raw(`SELECT client_id, url, restaurant_id::text AS restaurant_id, disabled FROM webhook_endpoints
		WHERE client_id = ANY (CAST(? AS text[])) AND restaurant_id = ANY (CAST(? AS uuid[])) ORDER BY created_at, id`,
		`{"`+strings.Join(clientIDs, `","`)+`"}`, "{"+strings.Join(restaurantIDs, ",")+"}").Scan(&out).Error
	return out, err
}
