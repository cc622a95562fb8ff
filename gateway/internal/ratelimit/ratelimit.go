// Package ratelimit enforces the partner request limit with GCRA in Redis, so
// the count is exact across gateway replicas. When Redis cannot be reached it
// falls back to an in-process GCRA with the same policy (per replica), logs
// that (at most every 10 s) and counts it, and never fails the request.
//
// A read whose key has room in its quota may defer its count until the
// caller has sent the request on (Count): the decision is the same, only the
// Redis round trip overlaps the service's work instead of preceding it.
// Counts of one key that arrive together share Redis calls (batch.go), with
// the decisions of counting them one by one.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Policy is a named quota per window.
type Policy struct {
	Name   string
	Quota  int
	Window time.Duration
}

// PolicyHeader is the RateLimit-Policy value, e.g. "partner";q=60;w=60.
func (p Policy) PolicyHeader() string {
	return strconv.Quote(p.Name) + ";q=" + strconv.Itoa(p.Quota) + ";w=" + strconv.Itoa(int(p.Window/time.Second))
}

func (p Policy) limit() redis_rate.Limit {
	return redis_rate.Limit{Rate: p.Quota, Burst: p.Quota, Period: p.Window}
}

// Decision is the outcome of counting one request.
type Decision struct {
	Allowed    bool
	Remaining  int
	ResetAfter time.Duration
	RetryAfter time.Duration
}

// Header is the RateLimit value for d, e.g. "partner";r=59;t=1.
func (d Decision) Header(p Policy) string {
	return strconv.Quote(p.Name) + ";r=" + strconv.Itoa(d.Remaining) + ";t=" + strconv.Itoa(ceilSeconds(d.ResetAfter, 0))
}

// RetryAfterSeconds is the integer Retry-After value, at least 1.
func (d Decision) RetryAfterSeconds() int { return ceilSeconds(d.RetryAfter, 1) }

func ceilSeconds(d time.Duration, min int) int {
	s := int(math.Ceil(d.Seconds()))
	if s < min {
		return min
	}
	return s
}

// Limiter counts requests against policies.
type Limiter struct {
	rdb    redis.UniversalClient
	redis  *redis_rate.Limiter
	prefix string
	local  *localGCRA

	// room remembers, per policy and key, the remaining quota of the
	// latest decision on this replica and whether a count is deferred:
	// the test of Count.
	roomMu sync.Mutex
	room   map[policyKey]headroom

	// flights holds the keys with a count on its way to Redis, each with
	// the batch waiting for it, if any (batch.go).
	flightMu sync.Mutex
	flights  map[policyKey]*batch

	// down is set from a failed Redis call until a probe in the background
	// gets an answer: meanwhile no request waits for Redis, so a hanging
	// Redis costs its timeout (the client's 100 ms bounds) once, to the
	// requests already on their way to it, not to every request.
	down      atomic.Bool
	lastLog   atomic.Int64
	fallbacks metric.Int64Counter
}

// New returns a limiter over rdb; keys start with prefix.
func New(rdb redis.UniversalClient, prefix string) *Limiter {
	counter, _ := otel.Meter("partnerapi.dev/gateway/ratelimit").Int64Counter("gateway.ratelimit.fallback",
		metric.WithDescription("Requests counted by the in-process limiter because Redis was unreachable or gave an unreadable answer."))
	l := &Limiter{prefix: prefix, local: newLocalGCRA(), fallbacks: counter, room: map[policyKey]headroom{}, flights: map[policyKey]*batch{}}
	if rdb != nil {
		l.rdb, l.redis = rdb, redis_rate.NewLimiter(rdb)
	}
	return l
}

// probeInterval is how often a bypassed Redis is pinged.
const probeInterval = 250 * time.Millisecond

// Pending is one request's count: decided when Count returned, or deferred
// until Decide. It belongs to the goroutine serving the request.
type Pending struct {
	d      Decision
	decide func() Decision // set while the count is deferred
}

// Deferred tells whether the count waits for Decide.
func (p *Pending) Deferred() bool { return p.decide != nil }

// Decide makes a deferred count, once, and returns the decision.
func (p *Pending) Decide() Decision {
	if p.decide != nil {
		p.d, p.decide = p.decide(), nil
	}
	return p.d
}

// Count counts one request for key under p, like Allow. When deferrable is
// set, no other count of key is deferred, and key keeps at least half its
// quota once this request is spent (as of its latest decision on this
// replica), the count is deferred: the caller sends the request on, then
// calls Decide, and answers by that decision. Otherwise Count decides before
// returning. So a key near or over its limit is always decided first, and at
// most one request per key and replica is ever sent on before its decision.
func (l *Limiter) Count(ctx context.Context, p Policy, key string, deferrable bool) *Pending {
	if !deferrable || !l.reserve(p, key) {
		d := l.count(ctx, p, key)
		l.remember(p, key, d.Remaining, false)
		return &Pending{d: d}
	}
	return &Pending{decide: func() Decision {
		d := l.count(ctx, p, key)
		l.remember(p, key, d.Remaining, true)
		return d
	}}
}

const maxRemembered = 100_000

type policyKey struct{ policy, key string }

type headroom struct {
	left     int
	deferred bool
}

// reserve takes the deferred slot of key when it is free and the key has
// room for this request.
func (l *Limiter) reserve(p Policy, key string) bool {
	k := policyKey{p.Name, key}
	l.roomMu.Lock()
	defer l.roomMu.Unlock()
	h, ok := l.room[k]
	if !ok || h.deferred || h.left-1 < p.Quota/2 {
		return false
	}
	h.deferred = true
	l.room[k] = h
	return true
}

// remember records a decision's remaining quota and, for a deferred count,
// frees the slot.
func (l *Limiter) remember(p Policy, key string, left int, deferred bool) {
	k := policyKey{p.Name, key}
	l.roomMu.Lock()
	defer l.roomMu.Unlock()
	if len(l.room) >= maxRemembered {
		clear(l.room)
	}
	h := l.room[k]
	h.left = left
	if deferred {
		h.deferred = false
	}
	l.room[k] = h
}

// Allow counts one request for key under p. Only Count keeps track of
// the key's room for later counts, and batches.
func (l *Limiter) Allow(ctx context.Context, p Policy, key string) Decision {
	var d [1]Decision
	l.allow(ctx, p, key, d[:])
	return d[0]
}

// allow counts len(ds) requests for key under p and gives each its decision,
// in order: in one Redis call when the quota has room for all of them. Either
// way each decision is the one it would get if they came one after another.
func (l *Limiter) allow(ctx context.Context, p Policy, key string, ds []Decision) {
	now := time.Now()
	if l.redis != nil && !l.down.Load() {
		res, err := l.redisAllow(ctx, p, key, len(ds))
		if err == nil {
			interval := p.Window / time.Duration(p.Quota)
			if res.Allowed == 0 && len(ds) > 1 {
				// No room for all of them. Each request fewer brings the
				// time they would be allowed one interval closer, so
				// RetryAfter tells how many fit now: those go first (at
				// least one). If the last of them is refused, so is each
				// request after it (a refusal takes nothing from the
				// quota); else the others try again.
				fit := len(ds) - int(math.Ceil(float64(res.RetryAfter)/float64(interval)))
				fit = min(max(fit, 1), len(ds)-1)
				l.allow(ctx, p, key, ds[:fit])
				if ds[fit-1].Allowed {
					l.allow(ctx, p, key, ds[fit:])
					return
				}
				for i := fit; i < len(ds); i++ {
					ds[i] = ds[fit-1]
				}
				return
			}
			// The requests after request i in this call took one
			// interval each from its remaining quota and reset time.
			for i := range ds {
				after := len(ds) - 1 - i
				ds[i] = Decision{Allowed: res.Allowed > 0, Remaining: res.Remaining + after,
					ResetAfter: res.ResetAfter - time.Duration(after)*interval, RetryAfter: res.RetryAfter}
			}
			return
		}
		if l.down.CompareAndSwap(false, true) {
			go l.probe() //nolint:gosec // G118: the probe outlives the request that found Redis down; it ends when Redis answers or the client closes
		}
		if last := l.lastLog.Load(); now.UnixNano()-last > int64(10*time.Second) && l.lastLog.CompareAndSwap(last, now.UnixNano()) {
			slog.WarnContext(ctx, "rate limiting falls back to the in-process limiter: no usable answer from Redis", "error", err)
		}
	}
	if l.redis != nil {
		l.fallbacks.Add(ctx, int64(len(ds)), metric.WithAttributes(attribute.String("policy", p.Name)))
	}
	for i := range ds {
		ds[i] = l.local.allow(p, key, now)
	}
}

// redisAllow counts in Redis. An answer redis_rate cannot read (it panics
// on a reply of the wrong shape) is an error like any other: the request
// falls back to the local limiter instead of failing the request.
func (l *Limiter) redisAllow(ctx context.Context, p Policy, key string, n int) (res *redis_rate.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("unexpected answer from Redis: %v", r)
		}
	}()
	return l.redis.AllowN(ctx, l.prefix+p.Name+":"+key, p.limit(), n)
}

// probe pings Redis until it answers, then lets requests use it again. It
// ends with the client.
func (l *Limiter) probe() {
	t := time.NewTicker(probeInterval)
	defer t.Stop()
	for range t.C {
		err := ping(context.Background(), l.rdb)
		if err == nil {
			l.down.Store(false)
			slog.Info("rate limiting counts in Redis again")
			return
		}
		if errors.Is(err, redis.ErrClosed) {
			return
		}
	}
}

// ping checks that Redis answers. On a Cluster a plain PING reaches one
// node at random, and the client keeps routing a slot to a dead master
// until it reloads the slot map (every few seconds, lazily): the probe
// reloads the map and pings every master in it, so requests go back to
// Redis once each slot has a master that answers, the promoted replica
// after a failover.
func ping(ctx context.Context, rdb redis.UniversalClient) error {
	if c, ok := rdb.(*redis.ClusterClient); ok {
		return c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return m.Ping(ctx).Err() })
	}
	return rdb.Ping(ctx).Err()
}

// Fallbacks is for tests: whether Redis is currently bypassed.
func (l *Limiter) Fallbacks() bool { return l.down.Load() }

// localGCRA is the generic cell rate algorithm in memory, the same rule
// redis_rate runs in Redis: each request moves the theoretical arrival time
// (tat) by one emission interval; a burst of Quota is allowed.
type localGCRA struct {
	mu  sync.Mutex
	tat map[string]time.Time
}

func newLocalGCRA() *localGCRA { return &localGCRA{tat: map[string]time.Time{}} }

const maxLocalKeys = 200_000

func (g *localGCRA) allow(p Policy, key string, now time.Time) Decision {
	interval := p.Window / time.Duration(p.Quota)
	burstOffset := interval * time.Duration(p.Quota)
	k := p.Name + ":" + key
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.tat) > maxLocalKeys {
		for kk, t := range g.tat {
			if t.Before(now) {
				delete(g.tat, kk)
			}
		}
	}
	tat := g.tat[k]
	if tat.Before(now) {
		tat = now
	}
	newTat := tat.Add(interval)
	allowAt := newTat.Add(-burstOffset)
	if now.Before(allowAt) {
		return Decision{Allowed: false, Remaining: 0, RetryAfter: allowAt.Sub(now), ResetAfter: tat.Sub(now)}
	}
	g.tat[k] = newTat
	remaining := int(now.Sub(allowAt) / interval)
	return Decision{Allowed: true, Remaining: remaining, ResetAfter: newTat.Sub(now), RetryAfter: -1}
}
