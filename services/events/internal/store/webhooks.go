package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"partnerapi.dev/pkg/idempotency"
	"partnerapi.dev/services/events/internal/domain"
)

var _ domain.WebhookRepository = (*Store)(nil)

type endpointRow struct {
	ID             string
	RestaurantID   string
	ClientID       string
	GrantID        string
	URL            string
	EventTypes     []byte
	Disabled       bool
	DisabledReason string
	Secret         string
	PreviousSecret string
	PreviousUntil  time.Time
	FailingSince   *time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

func (endpointRow) TableName() string { return "webhook_endpoints" }

func (r endpointRow) endpoint() domain.Endpoint {
	e := domain.Endpoint{ID: r.ID, RestaurantID: r.RestaurantID, ClientID: r.ClientID, GrantID: r.GrantID, URL: r.URL,
		Disabled: r.Disabled, DisabledReason: r.DisabledReason, Secret: r.Secret, PreviousSecret: r.PreviousSecret,
		PreviousUntil: r.PreviousUntil.UTC(), FailingSince: r.FailingSince, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	_ = json.Unmarshal(r.EventTypes, &e.EventTypes)
	return e
}

func toEndpointRow(e domain.Endpoint) endpointRow {
	types, _ := json.Marshal(e.EventTypes)
	return endpointRow{ID: e.ID, RestaurantID: e.RestaurantID, ClientID: e.ClientID, GrantID: e.GrantID, URL: e.URL,
		EventTypes: types, Disabled: e.Disabled, DisabledReason: e.DisabledReason, Secret: e.Secret,
		PreviousSecret: e.PreviousSecret, PreviousUntil: e.PreviousUntil, FailingSince: e.FailingSince,
		CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
}

type deliveryRow struct {
	ID            int64
	EndpointID    string
	RestaurantID  string
	EventID       string
	EventType     string
	Seq           int64
	TestData      []byte
	Status        string
	Attempts      int
	NextAttemptAt *time.Time
	LastAttemptAt *time.Time
	LastStatus    int
	LastError     string
	LatencyMs     int
	CreatedAt     time.Time
}

func (deliveryRow) TableName() string { return "webhook_deliveries" }

func (r deliveryRow) delivery() domain.Delivery {
	return domain.Delivery{ID: r.ID, EndpointID: r.EndpointID, EventID: r.EventID, EventType: r.EventType, Seq: r.Seq,
		Status: r.Status, Attempts: r.Attempts, NextAttemptAt: r.NextAttemptAt, LastAttemptAt: r.LastAttemptAt,
		LastStatus: r.LastStatus, LastError: r.LastError, LatencyMS: r.LatencyMs, CreatedAt: r.CreatedAt.UTC()}
}

// enqueueDeliveries inserts, inside an append's transaction, one pending
// delivery per new event and enabled endpoint of its restaurant subscribed
// to its type: the log and the queue commit together or not at all.
func enqueueDeliveries(tx *gorm.DB, now time.Time, rows []eventRow) error {
	var q strings.Builder
	args := make([]any, 0, 4*len(rows)+2)
	q.WriteString(`INSERT INTO webhook_deliveries (endpoint_id, restaurant_id, event_id, event_type, seq, status, next_attempt_at, created_at)
SELECT w.id, ev.restaurant_id, ev.id, ev.type, ev.seq, 'pending', ?::timestamptz, ?::timestamptz
  FROM (VALUES `)
	args = append(args, now, now)
	for i, r := range rows {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteString(`(?::uuid, ?, ?, ?::bigint)`)
		args = append(args, r.RestaurantID, r.ID, r.Type, r.Seq)
	}
	q.WriteString(`) AS ev(restaurant_id, id, type, seq)
  JOIN webhook_endpoints w ON w.restaurant_id = ev.restaurant_id
 WHERE NOT w.disabled AND w.event_types @> to_jsonb(ev.type)
 ORDER BY ev.restaurant_id, ev.seq, w.id`)
	return tx.Exec(q.String(), args...).Error
}

// WriteWebhooks runs fn and records its answer under the key, in one
// transaction.
func (s *Store) WriteWebhooks(ctx context.Context, key domain.WriteKey, fn func(domain.WebhookTx) (int, any, error)) (domain.Answer, error) {
	res, err := idempotency.Run(ctx, s.DB, idempotency.Request{Scope: key.Scope, Key: key.Key, Body: key.Body},
		func(tx *gorm.DB) (int, any, error) { return fn(&webhookTx{db: tx}) })
	if errors.Is(err, idempotency.ErrKeyReused) {
		return domain.Answer{}, domain.ErrKeyReused
	}
	return domain.Answer{Status: res.Status, Data: res.Data, Replayed: res.Replayed}, err
}

// Endpoints lists the owner's endpoints, oldest first.
func (s *Store) Endpoints(ctx context.Context, o domain.Owner) ([]domain.Endpoint, error) {
	var rows []endpointRow
	if err := s.DB.WithContext(ctx).Where("restaurant_id = ? AND client_id = ?", o.RestaurantID, o.ClientID).
		Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]domain.Endpoint, len(rows))
	for i, r := range rows {
		out[i] = r.endpoint()
	}
	return out, nil
}

// Endpoint reads one of the owner's endpoints.
func (s *Store) Endpoint(ctx context.Context, o domain.Owner, id string) (domain.Endpoint, error) {
	return readEndpoint(s.DB.WithContext(ctx), o, id, false)
}

func readEndpoint(db *gorm.DB, o domain.Owner, id string, lock bool) (domain.Endpoint, error) {
	if !domain.IsUUID(id) {
		return domain.Endpoint{}, domain.ErrNotFound
	}
	if lock {
		db = db.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	var rows []endpointRow
	if err := db.Where("id = ? AND restaurant_id = ? AND client_id = ?", id, o.RestaurantID, o.ClientID).Limit(1).Find(&rows).Error; err != nil {
		return domain.Endpoint{}, err
	}
	if len(rows) == 0 {
		return domain.Endpoint{}, domain.ErrNotFound
	}
	return rows[0].endpoint(), nil
}

// Deliveries lists an endpoint's deliveries, newest first.
func (s *Store) Deliveries(ctx context.Context, endpointID string, beforeID int64, limit int) ([]domain.Delivery, error) {
	db := s.DB.WithContext(ctx).Where("endpoint_id = ?", endpointID)
	if beforeID > 0 {
		db = db.Where("id < ?", beforeID)
	}
	var rows []deliveryRow
	if err := db.Order("id DESC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]domain.Delivery, len(rows))
	for i, r := range rows {
		out[i] = r.delivery()
	}
	return out, nil
}

// Claim leases up to n due deliveries: their next attempt moves to
// now+lease in the claiming transaction, so other workers skip them now
// (SKIP LOCKED) and after the commit (not due), and a worker that dies
// leaves them due again when the lease ends.
func (s *Store) Claim(ctx context.Context, now time.Time, lease time.Duration, n int) ([]domain.Job, error) {
	var jobs []domain.Job
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var rows []deliveryRow
		if err := tx.Raw(`UPDATE webhook_deliveries d SET next_attempt_at = ?
 WHERE d.id IN (SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ?
                 ORDER BY next_attempt_at, id LIMIT ? FOR UPDATE SKIP LOCKED)
RETURNING d.*`, now.Add(lease), now, n).Scan(&rows).Error; err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		ids := map[string]bool{}
		var epIDs []string
		for _, r := range rows {
			if !ids[r.EndpointID] {
				ids[r.EndpointID] = true
				epIDs = append(epIDs, r.EndpointID)
			}
		}
		var eps []endpointRow
		if err := tx.Where("id IN ?", epIDs).Find(&eps).Error; err != nil {
			return err
		}
		byID := map[string]domain.Endpoint{}
		for _, e := range eps {
			byID[e.ID] = e.endpoint()
		}
		for _, r := range rows {
			j := domain.Job{Delivery: r.delivery(), Endpoint: byID[r.EndpointID]}
			if r.Seq == 0 {
				j.Event = domain.Event{ID: r.EventID, Type: r.EventType, RestaurantID: r.RestaurantID, OccurredAt: r.CreatedAt.UTC(), Data: r.TestData}
			} else {
				var evs []eventRow
				if err := tx.Where("restaurant_id = ? AND seq = ?", r.RestaurantID, r.Seq).Limit(1).Find(&evs).Error; err != nil {
					return err
				}
				if len(evs) == 0 {
					// Dropped by retention: nothing left to send.
					j.Event = domain.Event{ID: r.EventID, Type: r.EventType, RestaurantID: r.RestaurantID, Seq: r.Seq}
				} else {
					e := evs[0]
					j.Event = domain.Event{ID: e.ID, Type: e.Type, RestaurantID: e.RestaurantID, Seq: e.Seq, OccurredAt: e.OccurredAt.UTC(), Data: e.Data}
				}
			}
			jobs = append(jobs, j)
		}
		return nil
	})
	return jobs, err
}

// Finish records an attempt's outcome on the delivery and its endpoint.
func (s *Store) Finish(ctx context.Context, j domain.Job, o domain.Outcome, now time.Time) error {
	return s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var next *time.Time
		if o.Status == domain.StatusPending {
			next = &o.Next
		}
		attempted := o.Success || o.Failure
		upd := map[string]any{"status": o.Status, "next_attempt_at": next, "last_error": o.Error}
		if attempted {
			upd["attempts"] = gorm.Expr("attempts + 1")
			upd["last_attempt_at"] = now
			upd["last_status"] = o.Code
			upd["latency_ms"] = int(o.Latency / time.Millisecond)
		}
		if err := tx.Model(&deliveryRow{}).Where("id = ?", j.ID).Updates(upd).Error; err != nil {
			return err
		}
		ep := tx.Model(&endpointRow{}).Where("id = ?", j.EndpointID)
		switch {
		case o.DisableEndpoint != "":
			if err := ep.Updates(map[string]any{"disabled": true, "disabled_reason": o.DisableEndpoint, "updated_at": now}).Error; err != nil {
				return err
			}
			// What was waiting for the endpoint will not be sent.
			return tx.Model(&deliveryRow{}).Where("endpoint_id = ? AND status = 'pending'", j.EndpointID).
				Updates(map[string]any{"status": domain.StatusFailed, "next_attempt_at": nil, "last_error": "The endpoint is disabled: " + o.DisableEndpoint}).Error
		case o.Success:
			return ep.Where("failing_since IS NOT NULL").Update("failing_since", nil).Error
		case o.Failure:
			return ep.Where("failing_since IS NULL").Update("failing_since", now).Error
		}
		return nil
	})
}

// webhookTx is the webhook storage inside one write's transaction.
type webhookTx struct{ db *gorm.DB }

func (t *webhookTx) CountEndpoints(o domain.Owner) (int, error) {
	// Serialises creations for the restaurant so the bound holds.
	if err := t.db.Exec(`SELECT pg_advisory_xact_lock(hashtext('webhook_endpoints:' || ?))`, o.RestaurantID).Error; err != nil {
		return 0, err
	}
	var n int64
	err := t.db.Model(&endpointRow{}).Where("restaurant_id = ? AND client_id = ?", o.RestaurantID, o.ClientID).Count(&n).Error
	return int(n), err
}

func (t *webhookTx) CreateEndpoint(e domain.Endpoint) error {
	r := toEndpointRow(e)
	return t.db.Create(&r).Error
}

func (t *webhookTx) LockEndpoint(o domain.Owner, id string) (domain.Endpoint, error) {
	return readEndpoint(t.db, o, id, true)
}

func (t *webhookTx) SaveEndpoint(e domain.Endpoint) error {
	r := toEndpointRow(e)
	return t.db.Select("*").Omit("created_at").Save(&r).Error
}

func (t *webhookTx) DeleteEndpoint(o domain.Owner, id string) error {
	return t.db.Where("id = ? AND restaurant_id = ? AND client_id = ?", id, o.RestaurantID, o.ClientID).Delete(&endpointRow{}).Error
}

func (t *webhookTx) EnqueueTest(e domain.Endpoint, ev domain.Event, now time.Time) (domain.Delivery, error) {
	r := deliveryRow{EndpointID: e.ID, RestaurantID: e.RestaurantID, EventID: ev.ID, EventType: ev.Type, TestData: ev.Data,
		Status: domain.StatusPending, NextAttemptAt: &now, CreatedAt: now}
	if err := t.db.Create(&r).Error; err != nil {
		return domain.Delivery{}, err
	}
	return r.delivery(), nil
}

func (t *webhookTx) RetryDelivery(e domain.Endpoint, id int64, now time.Time) (domain.Delivery, error) {
	var rows []deliveryRow
	if err := t.db.Raw(`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?
 WHERE id = ? AND endpoint_id = ? RETURNING *`, now, id, e.ID).Scan(&rows).Error; err != nil {
		return domain.Delivery{}, err
	}
	if len(rows) == 0 {
		return domain.Delivery{}, domain.ErrNotFound
	}
	return rows[0].delivery(), nil
}

func (t *webhookTx) Replay(e domain.Endpoint, from domain.ReplayFrom, now time.Time) (domain.ReplayResult, error) {
	var res domain.ReplayResult
	cond, arg := "e.seq > ?", any(from.AfterSeq)
	if !from.Since.IsZero() {
		cond, arg = "e.occurred_at >= ?", from.Since
	}
	var seqs []int64
	err := t.db.Raw(`WITH picked AS (
  SELECT e.restaurant_id, e.id, e.type, e.seq FROM events e
   WHERE e.restaurant_id = ? AND `+cond+` AND ?::jsonb @> to_jsonb(e.type)
   ORDER BY e.seq LIMIT ?)
INSERT INTO webhook_deliveries (endpoint_id, restaurant_id, event_id, event_type, seq, status, next_attempt_at, created_at)
SELECT ?::uuid, restaurant_id, id, type, seq, 'pending', ?::timestamptz, ?::timestamptz FROM picked ORDER BY seq
RETURNING seq`, e.RestaurantID, arg, mustJSON(e.EventTypes), domain.MaxReplay, e.ID, now, now).Scan(&seqs).Error
	if err != nil {
		return res, err
	}
	res.Enqueued = len(seqs)
	for _, s := range seqs {
		res.LastSeq = max(res.LastSeq, s)
	}
	if len(seqs) == domain.MaxReplay {
		err = t.db.Raw(`SELECT EXISTS (SELECT 1 FROM events e WHERE e.restaurant_id = ? AND e.seq > ? AND ?::jsonb @> to_jsonb(e.type))`,
			e.RestaurantID, res.LastSeq, mustJSON(e.EventTypes)).Scan(&res.HasMore).Error
	}
	return res, err
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
