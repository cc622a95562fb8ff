package outbox

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
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
	n := 0
	err := r.DB.WithContext(txCtx).Transaction(func(tx *gorm.DB) error {
		var mine bool
		if err := tx.Raw(`SELECT pg_try_advisory_xact_lock(hashtext(current_schema() || '.outbox'))`).Scan(&mine).Error; err != nil {
			return err
		}
		if !mine {
			return nil
		}
		var rows []Recorded
		if err := tx.Raw(`SELECT pos, id, type, restaurant_id, occurred_at, data FROM outbox_events ORDER BY pos LIMIT ?`,
			r.batch()).Scan(&rows).Error; err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		if err := r.Send(ctx, rows); err != nil {
			return err
		}
		n = len(rows)
		return tx.Exec(`DELETE FROM outbox_events WHERE pos <= ?`, rows[len(rows)-1].Pos).Error
	})
	if err != nil {
		return 0, err
	}
	return n, nil
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
