// Package server assembles the menus service on its database: main serves
// it and the tests call it, so both run the same service.
package server

import (
	"context"

	"partnerapi.dev/pkg/idempotency"
	"partnerapi.dev/pkg/lifecycle"
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/services/contracts/eventsclient"
	"partnerapi.dev/services/menus/internal/api"
	"partnerapi.dev/services/menus/internal/config"
	"partnerapi.dev/services/menus/internal/store"
)

// Build assembles the service; its closers stop the outbox relay and the
// idempotency-key purge.
func Build(ctx context.Context, cfg *config.Serve, p service.Process) (*service.Server, error) {
	h := &api.Handlers{Repo: &store.Store{DB: p.DB.Gorm}, Keys: cfg.Keys(), IngestToken: cfg.IngestToken.Reveal(), NamingSet: cfg.MenuNamingSet}
	ready := service.Ready(p.DB)
	return &service.Server{Public: h.App(ready), Internal: api.Internal(ready, p.Metrics), Closers: []lifecycle.Closer{
		eventsclient.StartRelay(ctx, p.DB.Gorm, cfg.Events, "menus"),
		idempotency.StartPurge(ctx, p.DB.Gorm, idempotency.PurgeInterval),
	}}, nil
}
