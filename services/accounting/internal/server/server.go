// Package server assembles the accounting service on its database: main
// serves it and the tests call it, so both run the same service.
package server

import (
	"context"

	"partnerapi.dev/pkg/cursor"
	"partnerapi.dev/pkg/idempotency"
	"partnerapi.dev/pkg/lifecycle"
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/services/accounting/internal/api"
	"partnerapi.dev/services/accounting/internal/config"
	"partnerapi.dev/services/accounting/internal/domain"
	"partnerapi.dev/services/accounting/internal/store"
	"partnerapi.dev/services/contracts/eventsclient"
)

// Build assembles the service; its closers stop the outbox relay and the
// idempotency-key purge.
func Build(ctx context.Context, cfg *config.Serve, p service.Process) (*service.Server, error) {
	cursorKey, err := cfg.CursorKeyBytes()
	if err != nil {
		return nil, err
	}
	svc := &domain.Service{Repo: &store.Store{DB: p.DB.Gorm, Reads: p.Reads}, Now: p.Now}
	h := &api.Handlers{Service: svc, Cursors: cursor.New(cursorKey), Keys: cfg.Keys(), IngestToken: cfg.IngestToken.Reveal()}
	ready := service.Ready(p.DB)
	return &service.Server{Public: h.App(ready), Internal: api.Internal(ready, p.Metrics), Closers: []lifecycle.Closer{
		eventsclient.StartRelay(ctx, p.DB.Gorm, cfg.Events, "accounting"),
		idempotency.StartPurge(ctx, p.DB.Gorm, idempotency.PurgeInterval),
	}}, nil
}
