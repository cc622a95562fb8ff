// Package server assembles the orders service on its database: main serves
// it and the tests call it, so both run the same service.
package server

import (
	"context"

	"partnerapi.dev/pkg/cursor"
	"partnerapi.dev/pkg/lifecycle"
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/services/contracts/eventsclient"
	"partnerapi.dev/services/orders/internal/api"
	"partnerapi.dev/services/orders/internal/config"
	"partnerapi.dev/services/orders/internal/store"
)

// Build assembles the service; its closers stop the outbox relay.
func Build(ctx context.Context, cfg *config.Serve, p service.Process) (*service.Server, error) {
	cursorKey, err := cfg.CursorKeyBytes()
	if err != nil {
		return nil, err
	}
	h := &api.Handlers{Repo: &store.Store{DB: p.DB.SQL, Reads: p.Reads}, Cursors: cursor.New(cursorKey), Keys: cfg.Keys(), IngestToken: cfg.IngestToken.Reveal()}
	ready := service.Ready(p.DB)
	return &service.Server{Public: h.App(ready), Internal: api.Internal(ready, p.Metrics),
		Closers: []lifecycle.Closer{eventsclient.StartRelay(ctx, p.DB.Gorm, cfg.Events, "orders")}}, nil
}
