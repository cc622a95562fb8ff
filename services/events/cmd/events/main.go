// Command events numbers each restaurant's events and serves the pull feed,
// and migrates the events schema.
//
//	events [serve]    answer HTTP on HTTP_ADDR (metrics on INTERNAL_HTTP_ADDR), keep partitions,
//	                  send webhooks
//	events migrate    apply the schema migrations
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/lifecycle"
	"partnerapi.dev/pkg/telemetry"
	"partnerapi.dev/services/events/internal/api"
	eventsconfig "partnerapi.dev/services/events/internal/config"
	"partnerapi.dev/services/events/internal/delivery"
	"partnerapi.dev/services/events/internal/store"
	"partnerapi.dev/services/events/migrations"
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
	return fmt.Errorf("unknown command %q: use serve or migrate", cmd)
}

func serve(ctx context.Context) error {
	var cfg eventsconfig.Serve
	if err := config.Load(ctx, &cfg); err != nil {
		return err
	}
	keys, _ := internalctx.ParseKeys(cfg.InternalContextKeys.Reveal())
	tel, err := telemetry.Setup(ctx, "events", telemetry.Options{})
	if err != nil {
		return err
	}
	db, err := database.Open(ctx, cfg.Database, "events")
	if err != nil {
		return err
	}
	st := &store.Store{DB: db.Gorm}
	listener := &store.Listener{URL: cfg.Database.URL.Reveal()}
	bg, stop := context.WithCancel(ctx)
	go listener.Run(bg)
	go keepRetention(bg, st, cfg.RetentionInterval)
	worker := &delivery.Worker{Repo: st, Client: delivery.Client(cfg.WebhooksAllowLoopback), Batch: 4 * cfg.WebhookParallel, Parallel: cfg.WebhookParallel,
		Wake:   listener.Appended(),
		Grants: &delivery.Grants{IdentityURL: cfg.IdentityURL, Keys: keys, Client: &http.Client{Timeout: 5 * time.Second}, TTL: cfg.WebhookGrantCacheTTL}}
	if cfg.WebhooksAllowLoopback {
		slog.Warn("WEBHOOKS_ALLOW_LOOPBACK is set: webhooks may reach loopback addresses; never set it where partners create endpoints")
	}
	go worker.Run(bg, time.Second)
	h := &api.Handlers{Repo: st, Webhooks: st, Notify: listener, Keys: keys, Token: cfg.EventsToken.Reveal(), AllowLoopbackHTTP: cfg.WebhooksAllowLoopback}
	ready := []httpx.Check{{Name: "database", Fn: db.Ping}}
	return lifecycle.Serve(ctx, []lifecycle.Listener{{App: h.App(ready), Addr: cfg.HTTPAddr}, {App: api.Internal(ready, tel.Handler()), Addr: cfg.InternalHTTPAddr}},
		lifecycle.Closer{Name: "background", Fn: func(context.Context) error { stop(); return nil }},
		lifecycle.Closer{Name: "database", Fn: db.Close},
		lifecycle.Closer{Name: "telemetry", Fn: tel.Shutdown})
}

// keepRetention creates the coming days' partitions and drops the expired
// ones now and every interval; every replica runs it, and the steps are
// safe to repeat and to run at once.
func keepRetention(ctx context.Context, st *store.Store, every time.Duration) {
	for {
		res, err := st.Retention(ctx, time.Now())
		if err != nil && ctx.Err() == nil {
			slog.Error("events retention failed", "error", err)
		} else if len(res.Created)+len(res.Dropped) > 0 {
			slog.Info("events retention", "created", res.Created, "dropped", res.Dropped)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

func migrate(ctx context.Context) error {
	var cfg eventsconfig.Database
	if err := config.Load(ctx, &cfg); err != nil {
		return err
	}
	db, err := database.Open(ctx, cfg.Database, "events")
	if err != nil {
		return err
	}
	defer db.Close(ctx)
	res, err := db.Migrate(ctx, migrations.FS, migrations.Go()...)
	if err != nil {
		return err
	}
	slog.Info("events schema migrated", "applied", len(res))
	return nil
}
