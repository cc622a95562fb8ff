// Package server assembles the catalog-import service on its database; main
// serves it.
package server

import (
	"context"
	"net/http"

	"partnerapi.dev/pkg/idempotency"
	"partnerapi.dev/pkg/lifecycle"
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/services/catalogimport/internal/api"
	"partnerapi.dev/services/catalogimport/internal/config"
	"partnerapi.dev/services/catalogimport/internal/domain"
	"partnerapi.dev/services/catalogimport/internal/menus"
	"partnerapi.dev/services/catalogimport/internal/store"
	"partnerapi.dev/services/contracts/eventsclient"
)

// Build assembles the service, reaching the menus service at MENUS_URL;
// its closers stop the outbox relay and the idempotency-key purge.
func Build(ctx context.Context, cfg *config.Serve, p service.Process) (*service.Server, error) {
	client := &menus.Client{BaseURL: cfg.MenusURL, HTTP: &http.Client{Timeout: cfg.MenusTimeout}}
	h := &api.Handlers{
		Settings:  domain.Settings{Limits: cfg.Limits.Domain(), CombosEnabled: cfg.CombosEnabled},
		Menus:     client.For,
		Imports:   &store.Store{DB: p.DB.Gorm},
		Keys:      cfg.Keys(),
		NamingSet: cfg.MenuNamingSet,
	}
	ready := service.Ready(p.DB)
	return &service.Server{Public: h.App(ready), Internal: api.Internal(ready, p.Metrics), Closers: []lifecycle.Closer{
		eventsclient.StartRelay(ctx, p.DB.Gorm, cfg.Events, "catalogimport"),
		idempotency.StartPurge(ctx, p.DB.Gorm, idempotency.PurgeInterval),
	}}, nil
}
