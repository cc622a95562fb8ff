// Package server assembles the events service on its database: the feed
// and append API, the webhook worker and the partition retention; main
// serves it.
package server

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/idempotency"
	"partnerapi.dev/pkg/lifecycle"
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/services/contracts/grantchanges"
	"partnerapi.dev/services/events/internal/api"
	"partnerapi.dev/services/events/internal/config"
	"partnerapi.dev/services/events/internal/delivery"
	"partnerapi.dev/services/events/internal/store"
)

// Build assembles the service and starts its background work; its closers
// stop that work, the idempotency-key purge and the webhook worker's own
// database pool.
func Build(ctx context.Context, cfg *config.Serve, p service.Process) (*service.Server, error) {
	secrets, err := cfg.WebhookSecretKeys.Keyring()
	if err != nil {
		return nil, err
	}
	st := &store.Store{DB: p.DB.Gorm, Reads: p.Reads, Secrets: secrets}
	// A send holds a connection while in flight (the endpoint's send lock):
	// the worker has its own pool, so sends never take the API's.
	wcfg := cfg.Database
	wcfg.MaxOpenConns, wcfg.MaxIdleConns = cfg.WebhookParallel+2, cfg.WebhookParallel+2
	wdb, err := database.Open(ctx, wcfg, "events")
	if err != nil {
		return nil, err
	}
	if err := delivery.ObserveBacklog(st.Backlog); err != nil {
		_ = wdb.Close(ctx)
		return nil, err
	}
	listener := &store.Listener{URL: cfg.Database.URL.Reveal()}
	bg, stop := context.WithCancel(ctx)
	go listener.Run(bg)
	go keepRetention(bg, st, cfg.RetentionInterval)
	grants := &delivery.Grants{IdentityURL: cfg.IdentityURL, Keys: cfg.Keys(), Client: &http.Client{Timeout: 5 * time.Second}, TTL: cfg.WebhookGrantCacheTTL}
	worker := &delivery.Worker{Repo: &store.Store{DB: wdb.Gorm, Secrets: secrets}, Client: delivery.Client(cfg.WebhooksAllowLoopback), Parallel: cfg.WebhookParallel, PerEndpoint: cfg.WebhookPerEndpoint, NamingSet: cfg.MenuNamingSet,
		Wake: listener.Appended(), Grants: grants}
	// Deliveries under a revoked grant stop within the interval.
	go (&grantchanges.Follower{IdentityURL: cfg.IdentityURL, Keys: cfg.Keys(), Client: grants.Client, Interval: grantchanges.DefaultInterval, Cache: grants}).Run(bg)
	if cfg.WebhooksAllowLoopback {
		slog.Warn("WEBHOOKS_ALLOW_LOOPBACK is set: webhooks may reach loopback addresses; never set it where partners create endpoints")
	}
	go worker.Run(bg, time.Second)
	h := &api.Handlers{Repo: st, Webhooks: st, Activity: st, Notify: listener, Keys: cfg.Keys(), Token: cfg.EventsToken.Reveal(), AllowLoopbackHTTP: cfg.WebhooksAllowLoopback,
		NamingSet: cfg.MenuNamingSet, Secrets: secrets}
	ready := service.Ready(p.DB)
	return &service.Server{Public: h.App(ready), Internal: api.Internal(ready, p.Metrics), Closers: []lifecycle.Closer{
		{Name: "background", Fn: func(context.Context) error { stop(); return nil }},
		idempotency.StartPurge(ctx, p.DB.Gorm, idempotency.PurgeInterval),
		{Name: "webhook database", Fn: wdb.Close},
	}}, nil
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
