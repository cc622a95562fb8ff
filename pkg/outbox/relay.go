package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"
)

// SendFunc delivers events, in the order given, to the service that numbers
// them; it returns nil only once they are acknowledged. Events may be sent
// again after a failure or a restart, so the receiver must ignore an id it
// already has.
type SendFunc func(ctx context.Context, events []Recorded) error

// Relay forwards a schema's outbox in commit order. Several replicas may run
// one each: a transaction-scoped advisory lock lets one of them forward at a
// time, so order holds across replicas.
type Relay struct {
	DB   *gorm.DB
	Send SendFunc
	// Batch is the most events per Send (default 200).
	Batch int
	// Poll is how often the outbox is read when no notification arrives
	// (default 2s); notifications make the usual latency far lower.
	Poll time.Duration
	// MaxBackoff bounds the wait between failed attempts (default 30s).
	MaxBackoff time.Duration
	Log        *slog.Logger
}

// Flush forwards at most one batch and deletes it once Send acknowledged
// it; it reports how many events it forwarded (0 also when another replica
// holds the relay lock).
func (r *Relay) Flush(ctx context.Context) (int, error) {
	// The transaction outlives a cancelled ctx: once Send was acknowledged
	// the batch is deleted even when the service is stopping, so a restart
	// resends only what was never acknowledged.
	txCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	// One cheap look first: a poll that finds nothing records no span and
	// takes no lock.
	var pending bool
	if err := r.DB.WithContext(txCtx).Raw(`SELECT EXISTS (SELECT 1 FROM outbox_events)`).Scan(&pending).Error; err != nil || !pending {
		var pg *pgconn.PgError
		if errors.As(err, &pg) && pg.Code == "42P01" { // undefined_table
			var searchPath string
			_ = r.DB.WithContext(txCtx).Raw(`SELECT current_setting('search_path')`).Scan(&searchPath).Error
			return 0, notMigrated(searchPath)
		}
		return 0, err
	}
	ctx, span := tracer.Start(ctx, "outbox relay")
	defer span.End()
	txCtx = trace.ContextWithSpan(txCtx, span)
	n := 0
	err := r.DB.WithContext(txCtx).Transaction(func(tx *gorm.DB) error {
		// current_schema() is NULL while the service's schema does not exist (a pod
		// started before its migration ran): say so rather than fail on the NULL.
		var lock struct {
			SearchPath string
			Mine       *bool
		}
		if err := tx.Raw(`SELECT current_setting('search_path') AS search_path, pg_try_advisory_xact_lock(hashtext(current_schema() || '.outbox')) AS mine`).Scan(&lock).Error; err != nil {
			return err
		}
		if lock.Mine == nil {
			return notMigrated(lock.SearchPath)
		}
		if !*lock.Mine {
			return nil
		}
		var rows []Recorded
		if err := tx.Raw(`SELECT pos, id, type, restaurant_id, occurred_at, data, trace_parent, client_id, grant_id, user_id FROM outbox_events ORDER BY pos LIMIT ?`,
			r.batch()).Scan(&rows).Error; err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		linkWriters(span, rows)
		if err := r.Send(ctx, rows); err != nil {
			return err
		}
		n = len(rows)
		return tx.Exec(`DELETE FROM outbox_events WHERE pos <= ?`, rows[len(rows)-1].Pos).Error
	})
	span.SetAttributes(attribute.Int("outbox.events", n))
	if err != nil {
		span.SetStatus(codes.Error, "forwarding failed")
		return 0, err
	}
	return n, nil
}

var tracer = otel.Tracer("partnerapi.dev/pkg/outbox")

// linkWriters links the relay's span to the trace of each request that
// recorded one of the events it forwards.
func linkWriters(span trace.Span, rows []Recorded) {
	seen := map[string]bool{}
	for _, e := range rows {
		if e.TraceParent == nil || seen[*e.TraceParent] {
			continue
		}
		seen[*e.TraceParent] = true
		sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(),
			propagation.MapCarrier{"traceparent": *e.TraceParent}))
		if sc.IsValid() {
			span.AddLink(trace.Link{SpanContext: sc})
		}
	}
}

// observeBacklog reports, whenever metrics are collected, how many events
// wait in the outbox and how old the oldest is: a relay that cannot forward
// shows as a growing backlog and age.
func (r *Relay) observeBacklog() (metric.Registration, error) {
	meter := otel.GetMeterProvider().Meter("partnerapi.dev/pkg/outbox")
	backlog, err := meter.Int64ObservableGauge("outbox.backlog", metric.WithUnit("{event}"),
		metric.WithDescription("events recorded and not yet forwarded to the events service"))
	if err != nil {
		return nil, err
	}
	age, err := meter.Float64ObservableGauge("outbox.oldest.age", metric.WithUnit("s"),
		metric.WithDescription("age of the oldest event not yet forwarded (0 when none waits)"))
	if err != nil {
		return nil, err
	}
	return meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		var row struct {
			N   int64
			Age float64
		}
		if err := r.DB.WithContext(ctx).Raw(`SELECT count(*) AS n,
       COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - min(occurred_at)), 0)::float8 AS age FROM outbox_events`).Scan(&row).Error; err != nil {
			return err
		}
		o.ObserveInt64(backlog, row.N)
		o.ObserveFloat64(age, row.Age)
		return nil
	}, backlog, age)
}

func (r *Relay) batch() int {
	if r.Batch > 0 {
		return r.Batch
	}
	return 200
}

// Run forwards until ctx ends: at once when a batch was full, on a
// notification from a recording transaction, or every Poll; after a failure
// it waits with exponential backoff and tries again. It returns nil when
// ctx ends.
func (r *Relay) Run(ctx context.Context) error {
	log := r.Log
	if log == nil {
		log = slog.Default()
	}
	poll := r.Poll
	if poll <= 0 {
		poll = 2 * time.Second
	}
	maxBackoff := r.MaxBackoff
	if maxBackoff <= 0 {
		maxBackoff = 30 * time.Second
	}
	if reg, err := r.observeBacklog(); err != nil {
		log.Warn("outbox relay: no backlog metrics", "error", err)
	} else {
		defer func() { _ = reg.Unregister() }()
	}
	wake := make(chan struct{}, 1)
	go r.listen(ctx, wake, log)
	backoff := time.Duration(0)
	for {
		n, err := r.Flush(ctx)
		wait := poll
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			backoff = min(max(2*backoff, 200*time.Millisecond), maxBackoff)
			wait = backoff
			log.Warn("outbox relay: forwarding failed, will retry", "retryIn", wait.String(), "error", err)
		case n == r.batch():
			backoff = 0
			continue
		default:
			backoff = 0
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-wake:
			if err != nil {
				<-t.C // a failure keeps its backoff even when new events arrive
			}
		case <-t.C:
		}
		t.Stop()
	}
}

// listen holds one connection LISTENing on Channel and signals wake on
// every notification; it reconnects after an error until ctx ends.
func (r *Relay) listen(ctx context.Context, wake chan<- struct{}, log *slog.Logger) {
	for ctx.Err() == nil {
		err := r.listenOnce(ctx, wake)
		if ctx.Err() != nil {
			return
		}
		log.Debug("outbox relay: listening stopped, polling until it resumes", "error", err)
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
		}
	}
}

func (r *Relay) listenOnce(ctx context.Context, wake chan<- struct{}) error {
	sqlDB, err := r.DB.DB()
	if err != nil {
		return err
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// database/sql has no notifications: pgx's own connection does.
	return conn.Raw(func(driverConn any) error {
		c, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return errors.New("the database driver is not pgx")
		}
		pg := c.Conn()
		if _, err := pg.Exec(ctx, "LISTEN "+pgx.Identifier{Channel}.Sanitize()); err != nil {
			return err
		}
		defer func() {
			// The connection goes back to the pool: stop listening on it.
			bg, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if _, err := pg.Exec(bg, "UNLISTEN *"); err != nil {
				_ = pg.Close(bg) // a broken connection must not be reused
			}
		}()
		for {
			if _, err := pg.WaitForNotification(ctx); err != nil {
				return err
			}
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	})
}

// notMigrated is the error of a relay whose service's schema (or its outbox)
// does not exist yet: a pod started before its migration ran.
func notMigrated(searchPath string) error {
	return fmt.Errorf("schema %s does not exist yet: the service's migration has not run", strconv.Quote(searchPath))
}
