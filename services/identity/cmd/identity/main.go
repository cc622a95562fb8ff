// Command identity is the identity service: directory, partner clients,
// grants and the OAuth 2.1 authorization server.
package main

import (
	"context"
	"log/slog"
	"time"

	"partnerapi.dev/pkg/lifecycle"
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/services/contracts/eventsclient"
	"partnerapi.dev/services/identity/internal/config"
	"partnerapi.dev/services/identity/internal/server"
	"partnerapi.dev/services/identity/migrations"
)

func main() {
	service.Main(service.Spec[*config.Config]{Name: "identity", Migrations: migrations.FS,
		GoMigrations: service.Steps(migrations.Go()...), Build: build})
}

// build assembles the service, purges expired tokens and forwards the
// outbox (authorization.revoked events) in the background.
func build(ctx context.Context, cfg *config.Config, p service.Process) (*service.Server, error) {
	parts, err := server.Build(ctx, *cfg, p.DB, p.Metrics)
	if err != nil {
		return nil, err
	}
	return &service.Server{Public: parts.App, Internal: parts.Internal,
		Closers: []lifecycle.Closer{
			lifecycle.Go(ctx, "token purge", func(ctx context.Context) { purgeExpired(ctx, parts) }),
			eventsclient.StartRelay(ctx, p.DB.Gorm, cfg.Events, "identity"),
		}}, nil
}

// purgeExpired deletes token rows a day after they expired, hourly.
func purgeExpired(ctx context.Context, parts *server.Parts) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if n, err := parts.Store.PurgeExpired(ctx); err != nil && ctx.Err() == nil {
			slog.Warn("purge expired tokens", "error", err)
		} else if n > 0 {
			slog.Info("purged expired tokens", "rows", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
