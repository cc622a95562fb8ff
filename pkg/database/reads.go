package database

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"gorm.io/gorm"
)

// Reads is where a service sends its heavy reads: a streaming replica when
// DATABASE_READ_URL names one, else the primary.
//
// A read sees every write committed before it began, whichever process made
// it: it asks the primary for its WAL insert position, then reads from the
// replica once the replica has replayed up to there (polling for up to
// ReadWait), and from the primary when the replica lags further or cannot
// be reached. A partner who applies a correction and then reads the report
// sees the correction, even when the two calls reach different replicas of
// the service.
type Reads struct {
	primary *DB
	replica *DB
	wait    time.Duration
	served  metric.Int64Counter
	lastLog atomic.Int64 // unix nanoseconds of the last warning (at most one every 10 s)
}

// OpenReads opens the replica of cfg.ReadURL, if any, beside primary.
func OpenReads(ctx context.Context, cfg Config, schema string, primary *DB) (*Reads, error) {
	served, _ := otel.Meter("partnerapi.dev/pkg/database").Int64Counter("db.reads",
		metric.WithDescription("Reads by the server that answered them (replica, or primary when the replica lagged or was unreachable)."))
	r := &Reads{primary: primary, wait: cfg.ReadWait, served: served}
	if cfg.ReadURL.Reveal() == "" {
		return r, nil
	}
	rc := cfg
	rc.URL = cfg.ReadURL
	replica, err := Open(ctx, rc, schema)
	if err != nil {
		return nil, errors.New("DATABASE_READ_URL: " + err.Error())
	}
	r.replica = replica
	return r, nil
}

// Close closes the replica's pool (the primary is its owner's to close).
func (r *Reads) Close(ctx context.Context) error {
	if r.replica == nil {
		return nil
	}
	return r.replica.Close(ctx)
}

// Replica is the replica's pool; nil without one.
func (r *Reads) Replica() *DB { return r.replica }

// DB returns the pool to read from now: the replica once it has replayed
// what the primary had committed, else the primary.
func (r *Reads) DB(ctx context.Context) *DB {
	if r.replica == nil {
		return r.primary
	}
	if err := r.caughtUp(ctx); err != nil {
		if now := time.Now().UnixNano(); !errors.Is(err, errLagging) && now-r.lastLog.Load() > int64(10*time.Second) {
			r.lastLog.Store(now)
			slog.WarnContext(ctx, "reading from the primary: the replica's replay position could not be compared with the primary's", "error", err)
		}
		r.served.Add(ctx, 1, metric.WithAttributes(attribute.String("server", "primary")))
		return r.primary
	}
	r.served.Add(ctx, 1, metric.WithAttributes(attribute.String("server", "replica")))
	return r.replica
}

// Gorm is DB's gorm handle with ctx.
func (r *Reads) Gorm(ctx context.Context) *gorm.DB { return r.DB(ctx).Gorm.WithContext(ctx) }

var errLagging = errors.New("the replica lags")

// caughtUp waits until the replica has replayed the primary's WAL insert
// position of now (an asynchronous commit's record may be inserted and not
// yet written, so the write position would not do).
func (r *Reads) caughtUp(ctx context.Context) error {
	var lsn string
	if err := r.primary.SQL.QueryRowContext(ctx, `SELECT pg_current_wal_insert_lsn()::text`).Scan(&lsn); err != nil {
		return err
	}
	deadline := time.Now().Add(r.wait)
	for {
		var replayed sql.NullBool
		if err := r.replica.SQL.QueryRowContext(ctx, `SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn`, lsn).Scan(&replayed); err != nil {
			return err
		}
		if replayed.Valid && replayed.Bool {
			return nil
		}
		if !replayed.Valid {
			return errors.New("DATABASE_READ_URL is not a streaming replica")
		}
		if time.Now().After(deadline) {
			return errLagging
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// WaitReplica waits, up to limit, until reads go to the replica: it has
// replayed everything the primary had committed. Without a replica it
// returns at once.
func (r *Reads) WaitReplica(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for r.replica != nil && r.DB(ctx) != r.replica {
		if time.Now().After(deadline) {
			return errors.New("the replica did not catch up with the primary")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}
