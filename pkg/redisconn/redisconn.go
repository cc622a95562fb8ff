// Package redisconn opens a go-redis client from a URL with OpenTelemetry
// tracing and metrics wired in: one node, a Redis Cluster or a
// Sentinel-managed primary.
package redisconn

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
)

// Tight bounds and no retry: the gateway's Redis calls (rate limits) have an
// in-process fallback, and a hanging Redis must cost a request at most about
// 100 ms before the fallback takes over.
const timeout = 100 * time.Millisecond

// Open parses url and returns an instrumented client of the topology it
// names, in the URL forms go-redis itself parses:
//
//   - one node: redis://[:password@]host:port/db (rediss:// for TLS);
//   - a Redis Cluster, by seed nodes: redis://[:password@]host:port?addr=host2:port&addr=host3:port;
//   - a Sentinel-managed primary: redis://[:password@]sentinel:port?master_name=name&addr=sentinel2:port&addr=sentinel3:port.
//
// It does not dial; use Ping for readiness.
func Open(raw string) (redis.UniversalClient, error) {
	// The URL may hold a password: no error here repeats it.
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
		return nil, errors.New("REDIS_URL is not a valid redis:// URL")
	}
	q := u.Query()
	var c redis.UniversalClient
	switch {
	case q.Has("master_name"):
		o, err := redis.ParseFailoverURL(raw)
		if err != nil {
			return nil, errors.New("REDIS_URL names a Sentinel set (master_name) but is not valid: redis://sentinel:port?master_name=name&addr=sentinel2:port")
		}
		bound(&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout, &o.MaxRetries, &o.Protocol)
		c = redis.NewFailoverClient(o)
	case q.Has("addr"):
		o, err := redis.ParseClusterURL(raw)
		if err != nil {
			return nil, errors.New("REDIS_URL names a Redis Cluster (addr) but is not valid: redis://host:port?addr=host2:port&addr=host3:port")
		}
		// MOVED and ASK answers are still followed (MaxRedirects): they
		// are how a cluster says where a slot went after a failover.
		bound(&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout, &o.MaxRetries, &o.Protocol)
		c = redis.NewClusterClient(o)
	default:
		o, err := redis.ParseURL(raw)
		if err != nil {
			return nil, errors.New("REDIS_URL is not a valid redis:// URL")
		}
		bound(&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout, &o.MaxRetries, &o.Protocol)
		c = redis.NewClient(o)
	}
	// No caller lookup per command: it walks the stack on every call, a
	// large share of a rate-limit check's cost. No db.statement either: it
	// formats every command with its arguments, keys (partner and user ids)
	// included, whether the span records or not.
	if err := redisotel.InstrumentTracing(c, redisotel.WithCallerEnabled(false), redisotel.WithDBStatement(false)); err != nil {
		return nil, fmt.Errorf("redis tracing: %w", err)
	}
	if err := redisotel.InstrumentMetrics(c); err != nil {
		return nil, fmt.Errorf("redis metrics: %w", err)
	}
	return c, nil
}

// bound gives a client of any topology the same limits: timeout on every
// wait, no retry, and RESP2 (nothing here uses RESP3's push notifications
// or client-side caching, and with RESP3 go-redis looks for pending push
// messages around every command).
func bound(dial, read, write, pool *time.Duration, retries, protocol *int) {
	*dial, *read, *write, *pool = timeout, timeout, timeout, timeout
	*retries, *protocol = -1, 2
}
