// Package outbox records a service's events in its own schema in the same
// transaction as the change they describe, and relays them, in the order
// their transactions committed, to whoever numbers and publishes them.
//
// Commit order: Record takes the schema's single counter row
// (UPDATE … RETURNING), so the row lock serialises every recording
// transaction from that statement to its commit. Positions are therefore
// handed out in commit order, a rollback gives its positions back, and a
// reader only ever sees a gap-free prefix: a transaction that commits late
// cannot be skipped, because no later position exists before it commits.
// Callers record as the last step of their transaction to keep the lock
// short.
package outbox

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pressly/goose/v3"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"

	"partnerapi.dev/pkg/internalctx"
)

// Channel is the LISTEN/NOTIFY channel a recording transaction notifies on
// commit, so relays wake at once instead of waiting for their next poll.
const Channel = "outbox_recorded"

// Migration creates the outbox tables; a service adds it to its migrations
// at the version it chooses.
func Migration(version int64) *goose.Migration {
	return goose.NewGoMigration(version,
		&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `
CREATE TABLE outbox_events (
    pos           bigint      PRIMARY KEY,
    id            text        NOT NULL,
    type          text        NOT NULL,
    restaurant_id text        NOT NULL,
    occurred_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    data          json        NOT NULL
);
CREATE TABLE outbox_counter (
    single   boolean PRIMARY KEY DEFAULT true CHECK (single),
    last_pos bigint  NOT NULL
);
INSERT INTO outbox_counter (last_pos) VALUES (0);`)
			return err
		}},
		&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `DROP TABLE outbox_events; DROP TABLE outbox_counter`)
			return err
		}},
	)
}

// TraceMigration adds where each event keeps the trace of the request that
// recorded it, so the relay's trace links to it; a service adds it after
// Migration, at the version it chooses.
func TraceMigration(version int64) *goose.Migration {
	return goose.NewGoMigration(version,
		&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `ALTER TABLE outbox_events ADD COLUMN trace_parent text`)
			return err
		}},
		&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `ALTER TABLE outbox_events DROP COLUMN trace_parent`)
			return err
		}},
	)
}

// traceParent is the W3C traceparent of the recorded span in ctx, or nil.
// ActorMigration adds who authorized each event: the partner client, the
// owner's grant and the user of the request that recorded it (none for
// changes no partner request made).
func ActorMigration(version int64) *goose.Migration {
	return goose.NewGoMigration(version,
		&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `ALTER TABLE outbox_events ADD COLUMN client_id text, ADD COLUMN grant_id text, ADD COLUMN user_id text`)
			return err
		}},
		&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `ALTER TABLE outbox_events DROP COLUMN client_id, DROP COLUMN grant_id, DROP COLUMN user_id`)
			return err
		}},
	)
}

// actor is who authorized the request of ctx (internalctx.Require put it
// there): client, grant and user, or three NULLs.
func actor(ctx context.Context) [3]any {
	c, ok := internalctx.FromContext(ctx)
	if !ok || c.GrantID == "" {
		return [3]any{nil, nil, nil}
	}
	return [3]any{c.ClientID, c.GrantID, c.UserID}
}

func traceParent(ctx context.Context) any {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() || !sc.IsSampled() {
		return nil
	}
	return "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + sc.TraceFlags().String()
}

// Event is one event as a service records it.
type Event struct {
	// ID is unique across the system; NewID makes one. Empty means NewID.
	ID           string
	Type         string
	RestaurantID string
	// Data is encoded as JSON (a json.RawMessage is kept as it is).
	Data any
}

// Recorded is an event read back from the outbox.
type Recorded struct {
	Pos          int64
	ID           string
	Type         string
	RestaurantID string
	OccurredAt   time.Time
	Data         json.RawMessage
	// TraceParent is the W3C traceparent of the request that recorded it,
	// when that was traced.
	TraceParent *string
	// ClientID, GrantID and UserID name the authorization of the partner
	// request that recorded it (nil for other changes).
	ClientID, GrantID, UserID *string
}

// Record writes events into the outbox inside tx, the caller's
// transaction: they exist if and only if the change commits. Call it as the
// last step of the transaction (see the package comment).
func Record(tx *gorm.DB, events ...Event) error {
	if len(events) == 0 {
		return nil
	}
	var last int64
	if err := tx.Raw(`UPDATE outbox_counter SET last_pos = last_pos + ? RETURNING last_pos`, len(events)).
		Scan(&last).Error; err != nil {
		return fmt.Errorf("outbox counter: %w", err)
	}
	first := last - int64(len(events)) + 1
	parent, who := traceParent(tx.Statement.Context), actor(tx.Statement.Context)
	// One multi-row INSERT per chunk keeps a bulk caller at a few
	// statements per thousand events.
	const chunk = 1000
	for start := 0; start < len(events); start += chunk {
		part := events[start:min(start+chunk, len(events))]
		var sb strings.Builder
		sb.WriteString(`INSERT INTO outbox_events (pos, id, type, restaurant_id, data, trace_parent, client_id, grant_id, user_id) VALUES `)
		args := make([]any, 0, 9*len(part))
		for i, e := range part {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString("(?,?,?,?,?,?,?,?,?)")
			data, err := encode(e.Data)
			if err != nil {
				return fmt.Errorf("outbox event %s: %w", e.Type, err)
			}
			id := e.ID
			if id == "" {
				id = NewID()
			}
			args = append(args, first+int64(start+i), id, e.Type, e.RestaurantID, string(data), parent, who[0], who[1], who[2])
		}
		if err := tx.Exec(sb.String(), args...).Error; err != nil {
			return fmt.Errorf("outbox insert: %w", err)
		}
	}
	return tx.Exec(`SELECT pg_notify(?, current_schema())`, Channel).Error
}

// RecordPgx is Record for a caller whose transaction is a pgx.Tx (a writer
// that needs COPY, which gorm cannot do); the events go in with one COPY.
func RecordPgx(ctx context.Context, tx pgx.Tx, events ...Event) error {
	if len(events) == 0 {
		return nil
	}
	var last int64
	if err := tx.QueryRow(ctx, `UPDATE outbox_counter SET last_pos = last_pos + $1 RETURNING last_pos`, len(events)).Scan(&last); err != nil {
		return fmt.Errorf("outbox counter: %w", err)
	}
	first := last - int64(len(events)) + 1
	rows := make([][]any, len(events))
	parent, who := traceParent(ctx), actor(ctx)
	for i, e := range events {
		data, err := encode(e.Data)
		if err != nil {
			return fmt.Errorf("outbox event %s: %w", e.Type, err)
		}
		id := e.ID
		if id == "" {
			id = NewID()
		}
		rows[i] = []any{first + int64(i), id, e.Type, e.RestaurantID, string(data), parent, who[0], who[1], who[2]}
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"outbox_events"}, []string{"pos", "id", "type", "restaurant_id", "data", "trace_parent", "client_id", "grant_id", "user_id"}, pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("outbox copy: %w", err)
	}
	_, err := tx.Exec(ctx, `SELECT pg_notify($1, current_schema())`, Channel)
	return err
}

func encode(v any) ([]byte, error) {
	switch d := v.(type) {
	case nil:
		return []byte("{}"), nil
	case json.RawMessage:
		return d, nil
	case []byte:
		return d, nil
	}
	return json.Marshal(v)
}

// crockford is the ULID alphabet (no I, L, O, U).
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// NewID returns "evt_" and 26 characters: a ULID (48 bits of milliseconds,
// 80 random bits, Crockford base32), so ids sort roughly by creation time.
func NewID() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	if _, err := rand.Read(b[6:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	out := make([]byte, 4+26)
	copy(out, "evt_")
	// 128 bits as 26 five-bit digits, the first carrying the top 3 bits.
	for i := 25; i >= 0; i-- {
		out[4+i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out)
}
