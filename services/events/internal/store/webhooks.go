package store

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/idempotency"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/events/internal/domain"
	"partnerapi.dev/services/events/internal/sealed"
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

// endpoint is the row with its secrets opened.
func (r endpointRow) endpoint(keys *sealed.Keyring) (domain.Endpoint, error) {
	e := domain.Endpoint{ID: r.ID, RestaurantID: r.RestaurantID, ClientID: r.ClientID, GrantID: r.GrantID, URL: r.URL,
		Disabled: r.Disabled, DisabledReason: r.DisabledReason, PreviousUntil: r.PreviousUntil.UTC(), FailingSince: r.FailingSince,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	_ = json.Unmarshal(r.EventTypes, &e.EventTypes)
	var err error
	if e.Secret, err = openSecret(keys, r.Secret, r.ID); err != nil {
		return e, err
	}
	e.PreviousSecret, err = openSecret(keys, r.PreviousSecret, r.ID)
	return e, err
}

func openSecret(keys *sealed.Keyring, v, owner string) (string, error) {
	if keys == nil {
		return "", errNoKeys
	}
	return keys.Open(v, owner)
}

var errNoKeys = errors.New("store: no webhook secret keys (WEBHOOK_SECRET_KEYS)")

// toEndpointRow is e as stored, its secrets sealed.
func toEndpointRow(e domain.Endpoint, keys *sealed.Keyring) (endpointRow, error) {
	if keys == nil {
		return endpointRow{}, errNoKeys
	}
	types, _ := json.Marshal(e.EventTypes)
	r := endpointRow{ID: e.ID, RestaurantID: e.RestaurantID, ClientID: e.ClientID, GrantID: e.GrantID, URL: e.URL,
		EventTypes: types, Disabled: e.Disabled, DisabledReason: e.DisabledReason, PreviousUntil: e.PreviousUntil,
		FailingSince: e.FailingSince, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
	var err error
	if r.Secret, err = keys.Seal(e.Secret, e.ID); err != nil {
		return r, err
	}
	r.PreviousSecret, err = keys.Seal(e.PreviousSecret, e.ID)
	return r, err
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

// revokedGrant is the authorization an authorization.revoked row names, or
// nil for another event.
func revokedGrant(r eventRow) *string {
	if r.Type != contracts.EventAuthorizationRevoked {
		return nil
	}
	if d, ok := domain.RevokedAuthorization(r.Data); ok {
		return &d.AuthorizationID
	}
	return nil
}

// recordRevocations notes, in an append's transaction, the authorizations
// whose authorization.revoked event it stores: from its commit on, every
// delivery to their endpoints but that event's is blocked (Attempt).
func recordRevocations(tx *gorm.DB, now time.Time, rows []eventRow) error {
	var grants []string
	for _, r := range rows {
		if g := revokedGrant(r); g != nil && !slices.Contains(grants, *g) {
			grants = append(grants, *g)
		}
	}
	if len(grants) == 0 {
		return nil
	}
	return tx.Exec(`INSERT INTO revoked_grants (grant_id, revoked_at) SELECT g, ? FROM unnest(CAST(? AS text[])) AS g ON CONFLICT DO NOTHING`,
		now, `{"`+strings.Join(grants, `","`)+`"}`).Error
}

// enqueueDeliveries inserts, inside an append's transaction, one pending
// delivery per new event and enabled endpoint of its restaurant subscribed
// to its type: the log and the queue commit together or not at all. An
// authorization.revoked event goes instead to every enabled endpoint bound
// to the authorization it names, subscribed or not.
func enqueueDeliveries(tx *gorm.DB, now time.Time, rows []eventRow) error {
	var q strings.Builder
	args := make([]any, 0, 5*len(rows)+2)
	q.WriteString(`INSERT INTO webhook_deliveries (endpoint_id, restaurant_id, event_id, event_type, seq, status, next_attempt_at, created_at)
SELECT w.id, ev.restaurant_id, ev.id, ev.type, ev.seq, 'pending', ?::timestamptz, ?::timestamptz
  FROM (VALUES `)
	args = append(args, now, now)
	for i, r := range rows {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteString(`(?::uuid, ?, ?, ?::bigint, ?::text)`)
		args = append(args, r.RestaurantID, r.ID, r.Type, r.Seq, revokedGrant(r))
	}
	q.WriteString(`) AS ev(restaurant_id, id, type, seq, revoked_grant)
  JOIN webhook_endpoints w ON w.restaurant_id = ev.restaurant_id
 WHERE NOT w.disabled AND CASE WHEN ev.type = '` + contracts.EventAuthorizationRevoked + `' THEN w.grant_id = ev.revoked_grant
                               ELSE w.event_types @> to_jsonb(ev.type) END
 ORDER BY ev.restaurant_id, ev.seq, w.id`)
	return tx.Exec(q.String(), args...).Error
}

// WriteWebhooks runs fn and records its answer under the key, in one
// transaction.
func (s *Store) WriteWebhooks(ctx context.Context, key domain.WriteKey, fn func(domain.WebhookTx) (int, any, error)) (domain.Answer, error) {
	res, err := idempotency.Run(ctx, s.DB, idempotency.Request{Scope: key.Scope, Key: key.Key, Body: key.Body},
		func(tx *gorm.DB) (int, any, error) { return fn(&webhookTx{db: tx, keys: s.Secrets}) })
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
		var err error
		if out[i], err = r.endpoint(s.Secrets); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Endpoint reads one of the owner's endpoints.
func (s *Store) Endpoint(ctx context.Context, o domain.Owner, id string) (domain.Endpoint, error) {
	return readEndpoint(s.DB.WithContext(ctx), s.Secrets, o, id, false)
}

func readEndpoint(db *gorm.DB, keys *sealed.Keyring, o domain.Owner, id string, lock bool) (domain.Endpoint, error) {
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
	return rows[0].endpoint(keys)
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

// Claim leases due deliveries within l: their next attempt moves to
// now+lease in the claiming transaction, so other workers skip them now
// (SKIP LOCKED) and after the commit (not due), and a worker that dies
// leaves them due again when the lease ends. The claim walks the endpoints
// with waiting deliveries (a skip scan of the pending index: one index
// descent per endpoint, however long its queue), skips those with no room
// left, ranks each other endpoint's oldest due deliveries, and takes rank 1
// of every endpoint before rank 2, oldest due first: one endpoint's backlog
// never takes the slots another endpoint's due delivery needs.
func (s *Store) Claim(ctx context.Context, now time.Time, lease time.Duration, l domain.ClaimLimits) ([]domain.Job, error) {
	var jobs []domain.Job
	if l.N < 1 || l.PerEndpoint < 1 {
		return nil, nil
	}
	full, partIDs, partRoom := []string{}, []string{}, []int{}
	for id, n := range l.InFlight {
		if n >= l.PerEndpoint {
			full = append(full, id)
		} else if n > 0 {
			partIDs, partRoom = append(partIDs, id), append(partRoom, l.PerEndpoint-n)
		}
	}
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var rows []deliveryRow
		if err := tx.Raw(`WITH RECURSIVE waiting(endpoint_id) AS (
  (SELECT endpoint_id FROM webhook_deliveries WHERE status = 'pending' ORDER BY endpoint_id LIMIT 1)
  UNION ALL
  SELECT (SELECT d.endpoint_id FROM webhook_deliveries d WHERE d.status = 'pending' AND d.endpoint_id > w.endpoint_id ORDER BY d.endpoint_id LIMIT 1)
    FROM waiting w WHERE w.endpoint_id IS NOT NULL)
UPDATE webhook_deliveries d SET next_attempt_at = ?
 WHERE d.id IN (
   SELECT c.id FROM waiting w
   LEFT JOIN unnest(?::uuid[], ?::int[]) AS part(id, room) ON part.id = w.endpoint_id
   CROSS JOIN LATERAL (
     SELECT x.id, x.next_attempt_at, row_number() OVER (ORDER BY x.next_attempt_at, x.id) AS rn
       FROM (SELECT id, next_attempt_at FROM webhook_deliveries
              WHERE endpoint_id = w.endpoint_id AND status = 'pending' AND next_attempt_at <= ?
              ORDER BY next_attempt_at, id LIMIT ? FOR UPDATE SKIP LOCKED) x) c
   WHERE w.endpoint_id IS NOT NULL AND w.endpoint_id <> ALL(?::uuid[]) AND c.rn <= coalesce(part.room, ?)
   ORDER BY c.rn, c.next_attempt_at, c.id LIMIT ?)
RETURNING d.*`, now.Add(lease), pgArray(partIDs), pgIntArray(partRoom), now, l.PerEndpoint, pgArray(full), l.PerEndpoint, l.N).Scan(&rows).Error; err != nil {
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
			ep, err := e.endpoint(s.Secrets)
			if err != nil {
				return err
			}
			byID[e.ID] = ep
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

func pgArray(v []string) string { return "{" + strings.Join(v, ",") + "}" }

func pgIntArray(v []int) string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = strconv.Itoa(n)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// sendLockWait bounds waiting for an endpoint's send lock: a change waits
// for the sends in flight, each at most one attempt's timeout and a grant
// lookup.
const sendLockWait = domain.DeliveryTimeout + 10*time.Second

// sendLock takes, in tx, the endpoint's send lock: shared by the sends to
// it (HoldEndpoint), exclusive for a change (ChangeEndpoint). Postgres
// queues a shared request behind a waiting exclusive one, so a stream of
// sends cannot keep a change waiting past the sends already in flight.
func sendLock(tx *gorm.DB, id string, shared bool) error {
	fn := "pg_advisory_xact_lock"
	if shared {
		fn += "_shared"
	}
	ctx, cancel := context.WithTimeout(database.Unbounded(tx.Statement.Context), sendLockWait)
	defer cancel()
	return tx.WithContext(ctx).Exec(`SELECT `+fn+`(hashtextextended('webhook_endpoint_sends:' || ?, 0))`, id).Error
}

// Attempt takes the endpoint's send lock shared, reads the endpoint, runs
// send and records the outcome it returns, in one transaction: a change to
// the endpoint commits before the read (send sees it) or after the outcome
// is recorded. An authorization.revoked delivery takes the lock exclusively,
// like a change: the sends in flight, which read the endpoint before the
// revocation was appended, end first, and every send after it reads
// GrantRevoked, so nothing reaches the endpoint after that event.
func (s *Store) Attempt(ctx context.Context, j domain.Job, send func(domain.Endpoint, bool) domain.Outcome) error {
	return s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := sendLock(tx, j.EndpointID, j.EventType != contracts.EventAuthorizationRevoked); err != nil {
			return err
		}
		var rows []endpointRow
		if err := tx.Where("id = ?", j.EndpointID).Limit(1).Find(&rows).Error; err != nil {
			return err
		}
		var o domain.Outcome
		if len(rows) == 0 {
			o = send(domain.Endpoint{}, false)
		} else {
			ep, err := rows[0].endpoint(s.Secrets)
			if err != nil {
				return err
			}
			if err := tx.Raw(`SELECT EXISTS (SELECT 1 FROM revoked_grants WHERE grant_id = ?)`, ep.GrantID).Scan(&ep.GrantRevoked).Error; err != nil {
				return err
			}
			o = send(ep, true)
		}
		return finish(tx, j, o)
	})
}

// finish records an attempt's outcome on the delivery and its endpoint.
func finish(tx *gorm.DB, j domain.Job, o domain.Outcome) error {
	now := o.At
	return tx.Transaction(func(tx *gorm.DB) error {
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
type webhookTx struct {
	db   *gorm.DB
	keys *sealed.Keyring
}

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
	r, err := toEndpointRow(e, t.keys)
	if err != nil {
		return err
	}
	return t.db.Create(&r).Error
}

func (t *webhookTx) LockEndpoint(o domain.Owner, id string) (domain.Endpoint, error) {
	return readEndpoint(t.db, t.keys, o, id, true)
}

func (t *webhookTx) ChangeEndpoint(o domain.Owner, id string) (domain.Endpoint, error) {
	if !domain.IsUUID(id) {
		return domain.Endpoint{}, domain.ErrNotFound
	}
	if err := sendLock(t.db, id, false); err != nil {
		return domain.Endpoint{}, err
	}
	return readEndpoint(t.db, t.keys, o, id, true)
}

func (t *webhookTx) SaveEndpoint(e domain.Endpoint) error {
	r, err := toEndpointRow(e, t.keys)
	if err != nil {
		return err
	}
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
	var pending int
	if err := t.db.Raw(`SELECT count(*) FROM (SELECT 1 FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'pending' LIMIT ?) p`,
		e.ID, domain.MaxPendingForReplay).Scan(&pending).Error; err != nil {
		return res, err
	}
	if pending >= domain.MaxPendingForReplay {
		return res, domain.ErrTooManyPending
	}
	limit := min(domain.MaxReplay, domain.MaxPendingForReplay-pending)
	var seqs []int64
	err := t.db.Raw(`WITH picked AS (
  SELECT e.restaurant_id, e.id, e.type, e.seq FROM events e
   WHERE e.restaurant_id = ? AND `+cond+` AND ?::jsonb @> to_jsonb(e.type)
   ORDER BY e.seq LIMIT ?)
INSERT INTO webhook_deliveries (endpoint_id, restaurant_id, event_id, event_type, seq, status, next_attempt_at, created_at)
SELECT ?::uuid, restaurant_id, id, type, seq, 'pending', ?::timestamptz, ?::timestamptz FROM picked ORDER BY seq
RETURNING seq`, e.RestaurantID, arg, mustJSON(e.EventTypes), limit, e.ID, now, now).Scan(&seqs).Error
	if err != nil {
		return res, err
	}
	res.Enqueued = len(seqs)
	for _, s := range seqs {
		res.LastSeq = max(res.LastSeq, s)
	}
	if len(seqs) == limit {
		err = t.db.Raw(`SELECT EXISTS (SELECT 1 FROM events e WHERE e.restaurant_id = ? AND e.seq > ? AND ?::jsonb @> to_jsonb(e.type))`,
			e.RestaurantID, res.LastSeq, mustJSON(e.EventTypes)).Scan(&res.HasMore).Error
	}
	return res, err
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// SealSecrets seals under the active key every endpoint secret and every
// stored create or rotate answer that is in clear (written before secrets
// were sealed) or sealed under an older key, and answers how many rows it
// changed. Each row is rewritten only if it is still as read, so it is safe
// while the service serves (a rotation committed meanwhile wins) and safe
// to run again: `events migrate` runs it after the schema migrations.
func (s *Store) SealSecrets(ctx context.Context) (int, error) {
	if s.Secrets == nil {
		return 0, errNoKeys
	}
	db := s.DB.WithContext(database.Unbounded(ctx))
	var eps []endpointRow
	if err := db.Select("id, secret, previous_secret").Find(&eps).Error; err != nil {
		return 0, err
	}
	n := 0
	for _, r := range eps {
		if s.Secrets.Current(r.Secret) && s.Secrets.Current(r.PreviousSecret) {
			continue
		}
		var secrets [2]string
		for i, v := range []string{r.Secret, r.PreviousSecret} {
			plain, err := s.Secrets.Open(v, r.ID)
			if err != nil {
				return n, err
			}
			if secrets[i], err = s.Secrets.Seal(plain, r.ID); err != nil {
				return n, err
			}
		}
		res := db.Model(&endpointRow{}).Where("id = ? AND secret = ? AND previous_secret = ?", r.ID, r.Secret, r.PreviousSecret).
			Updates(map[string]any{"secret": secrets[0], "previous_secret": secrets[1]})
		if res.Error != nil {
			return n, res.Error
		}
		n += int(res.RowsAffected)
	}
	var answers []struct {
		Scope, Key string
		Response   []byte
	}
	if err := db.Raw(`SELECT scope, key, response FROM idempotency_keys WHERE response->>'secret' IS NOT NULL`).Scan(&answers).Error; err != nil {
		return n, err
	}
	for _, a := range answers {
		var obj map[string]json.RawMessage
		var v string
		var ep struct{ ID string }
		if json.Unmarshal(a.Response, &obj) != nil || json.Unmarshal(obj["secret"], &v) != nil || json.Unmarshal(obj["endpoint"], &ep) != nil ||
			s.Secrets.Current(v) {
			continue
		}
		plain, err := s.Secrets.Open(v, ep.ID)
		if err != nil {
			return n, err
		}
		if v, err = s.Secrets.Seal(plain, ep.ID); err != nil {
			return n, err
		}
		obj["secret"], _ = json.Marshal(v)
		resp, _ := json.Marshal(obj)
		res := db.Exec(`UPDATE idempotency_keys SET response = ? WHERE scope = ? AND key = ? AND response = ?::jsonb`, resp, a.Scope, a.Key, a.Response)
		if res.Error != nil {
			return n, res.Error
		}
		n += int(res.RowsAffected)
	}
	return n, nil
}

// Backlog counts the deliveries waiting per endpoint and how long the
// longest-due one has been due (for the delivery metrics).
func (s *Store) Backlog(ctx context.Context) ([]domain.Backlog, error) {
	var rows []struct {
		EndpointID string
		Waiting    int64
		DueSeconds float64
	}
	err := s.DB.WithContext(ctx).Raw(`SELECT endpoint_id::text AS endpoint_id, count(*) AS waiting,
       coalesce(extract(epoch FROM now() - min(next_attempt_at) FILTER (WHERE next_attempt_at <= now())), 0)::float8 AS due_seconds
  FROM webhook_deliveries WHERE status = ? GROUP BY endpoint_id`, domain.StatusPending).Scan(&rows).Error
	out := make([]domain.Backlog, len(rows))
	for i, r := range rows {
		out[i] = domain.Backlog{EndpointID: r.EndpointID, Waiting: r.Waiting, OldestDue: time.Duration(r.DueSeconds * float64(time.Second))}
	}
	return out, err
}
