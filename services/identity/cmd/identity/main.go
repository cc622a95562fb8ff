// Command identity is the identity service: directory, partner clients,
// grants and the OAuth 2.1 authorization server.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/lifecycle"
	"partnerapi.dev/pkg/telemetry"
	idconfig "partnerapi.dev/services/identity/internal/config"
	"partnerapi.dev/services/identity/internal/server"
)

func main() { lifecycle.Main(run) }

func run(ctx context.Context, args []string) error {
	cmd := "serve"
	if len(args) > 0 {
		cmd = args[0]
	}
	switch cmd {
	case "serve":
		return serve(ctx)
	case "migrate":
		return migrate(ctx)
	}
	return fmt.Errorf("unknown command %q (use serve or migrate)", cmd)
}

func migrate(ctx context.Context) error {
	var dbc database.Config
	if err := config.Load(ctx, &dbc); err != nil {
		return err
	}
	db, err := database.Open(ctx, dbc, "identity")
	if err != nil {
		return err
	}
	defer db.Close(ctx)
	return server.Migrate(ctx, db)
}

func serve(ctx context.Context) error {
	var cfg idconfig.Config
	if err := config.Load(ctx, &cfg); err != nil {
		return err
	}
	tel, err := telemetry.Setup(ctx, "identity", telemetry.Options{})
	if err != nil {
		return err
	}
	db, err := database.Open(ctx, cfg.Database, "identity")
	if err != nil {
		return err
	}
	parts, err := server.Build(ctx, cfg, db, tel.Handler())
	if err != nil {
		_ = db.Close(ctx)
		return err
	}
	go purgeExpired(ctx, parts)
	return lifecycle.Serve(ctx, []lifecycle.Listener{{App: parts.App, Addr: cfg.HTTPAddr}, {App: parts.Internal, Addr: cfg.InternalHTTPAddr}},
		lifecycle.Closer{Name: "database", Fn: db.Close},
		lifecycle.Closer{Name: "telemetry", Fn: tel.Shutdown})
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
