// Command gateway is the partner-facing edge of the Restaurant Partner API:
// it authenticates bearer tokens, applies grants, scopes, boundaries and rate
// limits, and forwards each operation to the service that owns it.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"partnerapi.dev/gateway/internal/config"
	"partnerapi.dev/gateway/internal/grants"
	"partnerapi.dev/gateway/internal/server"
	pkgconfig "partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/lifecycle"
	"partnerapi.dev/pkg/redisconn"
	"partnerapi.dev/pkg/telemetry"
)

func main() { lifecycle.Main(run) }

func run(ctx context.Context, args []string) error {
	cmd := "serve"
	if len(args) > 0 {
		cmd = args[0]
	}
	switch cmd {
	case "serve":
	case pkgconfig.CheckCommand:
		return pkgconfig.Check(ctx, &config.Config{}, os.Stdout)
	default:
		return fmt.Errorf("unknown command %q: use serve or check-config", cmd)
	}
	var cfg config.Config
	if err := pkgconfig.Load(ctx, &cfg); err != nil {
		return err
	}
	tel, err := telemetry.Setup(ctx, "gateway", telemetry.Options{})
	if err != nil {
		return fmt.Errorf("telemetry: %w", err)
	}
	redis.SetLogger(&quietRedisLog{})
	rdb, err := redisconn.Open(cfg.RedisURL.Reveal())
	if err != nil {
		return err
	}
	app, g, err := server.New(cfg, server.Deps{Redis: rdb, RateLimitPrefix: cfg.RateLimitKeyPrefix})
	if err != nil {
		return err
	}
	usage := lifecycle.Go(ctx, "grant use", func(ctx context.Context) { g.Usage().Run(ctx, grants.UsageInterval) })
	changes := lifecycle.Go(ctx, "grant changes", g.FollowGrantChanges)
	return lifecycle.Serve(ctx, []lifecycle.Listener{{App: app, Addr: cfg.HTTPAddr}, {App: g.Internal(tel.Handler()), Addr: cfg.InternalHTTPAddr}},
		usage, changes,
		lifecycle.Closer{Name: "redis", Fn: func(context.Context) error { return rdb.Close() }},
		lifecycle.Closer{Name: "telemetry", Fn: tel.Shutdown},
	)
}

// quietRedisLog passes go-redis's own log lines (one per failed dial while
// Redis is down) on at most every 10 s; the limiter logs the fallback itself.
type quietRedisLog struct{ last atomic.Int64 }

func (l *quietRedisLog) Printf(_ context.Context, format string, v ...any) {
	now := time.Now().UnixNano()
	if last := l.last.Load(); now-last > int64(10*time.Second) && l.last.CompareAndSwap(last, now) {
		slog.Warn("redis client: " + fmt.Sprintf(format, v...))
	}
}
