// Package redisconn opens a go-redis client from a URL with OpenTelemetry
// tracing and metrics wired in.
package redisconn

import (
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
)

// Open parses url (redis://[:password@]host:port/db) and returns an
// instrumented client. It does not dial; use Ping for readiness.
func Open(url string) (*redis.Client, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, errors.New("REDIS_URL is not a valid redis:// URL")
	}
	// Tight bounds and no retry: the gateway's Redis calls (rate limits,
	// short caches) have an in-process fallback, and a hanging Redis must
	// cost a request at most about 100 ms before the fallback takes over.
	opts.DialTimeout = 100 * time.Millisecond
	opts.ReadTimeout = 100 * time.Millisecond
	opts.WriteTimeout = 100 * time.Millisecond
	opts.PoolTimeout = 100 * time.Millisecond
	opts.MaxRetries = -1
	// RESP2: nothing here uses RESP3's push notifications or client-side
	// caching, and with RESP3 go-redis looks for pending push messages
	// around every command.
	opts.Protocol = 2
	c := redis.NewClient(opts)
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
