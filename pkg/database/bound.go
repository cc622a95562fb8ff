package database

import (
	"context"
	"database/sql/driver"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// ErrUnavailable is the error of a statement or connection the breaker
// refused without trying: the database failed repeatedly and has not
// answered a probe since. It is an outage like any other (IsUnavailable).
var ErrUnavailable = errors.New("database skipped: it failed repeatedly and has not answered a probe since")

type unboundedKey struct{}

// Unbounded marks ctx so that statements run with it are not cut by
// Config.StatementTimeout: bulk imports and migrations, whose statements may
// legitimately run for minutes. Request paths keep the bound.
func Unbounded(ctx context.Context) context.Context {
	return context.WithValue(ctx, unboundedKey{}, true)
}

func isUnbounded(ctx context.Context) bool { v, _ := ctx.Value(unboundedKey{}).(bool); return v }

type probeKey struct{}

func isProbe(ctx context.Context) bool { v, _ := ctx.Value(probeKey{}).(bool); return v }

// statementBound is the pgx tracer that gives each statement its deadline
// and feeds the breaker. It sits below database/sql, so it bounds gorm and
// the stores that use *sql.DB directly alike. A deadline reached makes pgx
// interrupt the socket read at once: the bound holds when the server is
// frozen and no server-side timeout can fire.
type statementBound struct {
	timeout time.Duration
	breaker *breaker
}

type boundKey struct{}

type bound struct {
	parent  context.Context
	cancel  context.CancelFunc
	refused bool
}

func (s *statementBound) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	if isProbe(ctx) {
		return ctx
	}
	if s.breaker.isOpen() {
		// An expired context: pgx refuses the statement before sending it
		// and keeps the connection.
		refused, cancel := context.WithDeadline(ctx, time.Unix(0, 0))
		return context.WithValue(refused, boundKey{}, &bound{cancel: cancel, refused: true})
	}
	b := &bound{parent: ctx}
	if s.timeout > 0 && !isUnbounded(ctx) {
		ctx, b.cancel = context.WithTimeout(ctx, s.timeout)
	}
	return context.WithValue(ctx, boundKey{}, b)
}

func (s *statementBound) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	b, _ := ctx.Value(boundKey{}).(*bound)
	if b == nil {
		return
	}
	if b.cancel != nil {
		b.cancel()
	}
	if !b.refused {
		s.breaker.record(ctx, data.Err, b.parent.Err())
	}
}

// gatedConnector refuses new connections while the breaker is open (a
// connection to a frozen server would wait for the whole connect timeout)
// and feeds the breaker with connect failures.
type gatedConnector struct {
	driver.Connector
	breaker *breaker
}

func (g gatedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	probe := isProbe(ctx)
	if !probe && g.breaker.isOpen() {
		return nil, ErrUnavailable
	}
	c, err := g.Connector.Connect(ctx)
	// Only a failure counts: a connection opened says nothing of whether
	// statements get answers (each timed-out statement costs its
	// connection, so a success here would reset the count every time).
	if !probe && err != nil {
		g.breaker.record(ctx, err, ctx.Err())
	}
	return c, err
}

// pingIdle replaces the check database/sql runs when it hands out a
// connection that sat idle over a second: the driver pings it with the
// caller's context, which has no deadline on a long poll, so against a
// frozen server it would wait forever. Here the ping has the bound; a
// connection that fails it is closed, so the driver's own ping (asked for
// by returning true) fails at once and the pool opens another one.
func (b *breaker) pingIdle(ctx context.Context, p stdlib.ShouldPingParams) bool {
	if p.IdleDuration <= time.Second || b.isOpen() {
		// While the breaker is open the statement is refused anyway.
		return false
	}
	timeout := b.probeTimeout
	if timeout <= 0 {
		timeout = time.Second
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := p.Conn.PgConn().Ping(pctx)
	if err == nil {
		return false
	}
	if ctx.Err() == nil && pctx.Err() != nil {
		// A server that cannot answer a ping within the bound is not
		// answering: open at once, so the pool's next try (a new
		// connection) does not wait for the connect bound as well.
		b.trip(ctx, err)
	} else {
		b.record(ctx, err, ctx.Err())
	}
	return true
}

// Breaker tuning: this many outage errors in a row open it; while open,
// every statement and connection is refused at once (fast 503) and a probe
// pings the database every probeInterval until it answers.
const (
	breakerThreshold = 3
	probeInterval    = 200 * time.Millisecond
)

type breaker struct {
	open         atomic.Bool
	mu           sync.Mutex
	failures     int
	probe        func(ctx context.Context) error
	probeTimeout time.Duration
	stopOnce     sync.Once
	done         chan struct{}
}

func (b *breaker) isOpen() bool { return b != nil && b.open.Load() }

// record counts one outcome. Errors that are not outages (a constraint, a
// syntax error) prove the database answers; a statement ended because its
// caller went away says nothing about the database.
func (b *breaker) record(ctx context.Context, err, callerErr error) {
	if b == nil {
		return
	}
	outage := err != nil && IsUnavailable(err)
	if outage && callerErr != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !outage {
		b.failures = 0
		return
	}
	b.failures++
	if b.failures >= breakerThreshold {
		b.openLocked(ctx, err)
	}
}

// trip opens the breaker now.
func (b *breaker) trip(ctx context.Context, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.openLocked(ctx, err)
}

// openLocked opens the breaker; ctx is the statement's that found the
// outage, so the warning joins that request's trace.
func (b *breaker) openLocked(ctx context.Context, err error) {
	if b.probe != nil && !b.open.Load() {
		b.open.Store(true)
		slog.WarnContext(ctx, "database unavailable: statements are refused until it answers a probe", "error", err)
		go b.run() //nolint:gosec // G118: the probe outlives the statement that found the outage; it ends when the database answers or the pool closes
	}
}

func (b *breaker) run() {
	t := time.NewTicker(probeInterval)
	defer t.Stop()
	timeout := b.probeTimeout
	if timeout <= 0 {
		timeout = time.Second
	}
	for {
		select {
		case <-b.done:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), probeKey{}, true), timeout)
		err := b.probe(ctx)
		cancel()
		if err == nil {
			b.mu.Lock()
			b.failures = 0
			b.open.Store(false)
			b.mu.Unlock()
			slog.Info("database answers again")
			return
		}
	}
}

func (b *breaker) stop() {
	if b != nil {
		b.stopOnce.Do(func() { close(b.done) })
	}
}

// dialer opens connections with TCP keepalive and, on Linux, a
// TCP_USER_TIMEOUT, so a connection to a host that vanished (a partition)
// fails within seconds instead of the kernel's retransmission limits.
func dialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{
		Timeout:         timeout,
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: 10 * time.Second, Interval: 5 * time.Second, Count: 3},
		Control:         setUserTimeout,
	}
}
