// Command catalogimport plans partners' catalog import documents and applies
// them through the menus service's internal catalog API, and migrates the
// catalogimport schema.
//
//	catalogimport [serve]   answer HTTP on HTTP_ADDR (metrics on INTERNAL_HTTP_ADDR)
//	catalogimport migrate   apply the schema migrations
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/lifecycle"
	"partnerapi.dev/pkg/telemetry"
	"partnerapi.dev/services/catalogimport/internal/api"
	importconfig "partnerapi.dev/services/catalogimport/internal/config"
	"partnerapi.dev/services/catalogimport/internal/domain"
	"partnerapi.dev/services/catalogimport/internal/menus"
	"partnerapi.dev/services/catalogimport/internal/store"
	"partnerapi.dev/services/catalogimport/migrations"
	"partnerapi.dev/services/contracts/eventsclient"
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
	var cfg importconfig.Serve
	if err := config.Load(ctx, &cfg); err != nil {
		return err
	}
	keys, _ := internalctx.ParseKeys(cfg.InternalContextKeys.Reveal())
	tel, err := telemetry.Setup(ctx, "catalogimport", telemetry.Options{})
	if err != nil {
		return err
	}
	db, err := database.Open(ctx, cfg.Database, "catalogimport")
	if err != nil {
		return err
	}
	relay := eventsclient.StartRelay(ctx, db.Gorm, cfg.Events, "catalogimport")
	client := &menus.Client{BaseURL: cfg.MenusURL, HTTP: &http.Client{Timeout: cfg.MenusTimeout}}
	h := &api.Handlers{
		Settings:  domain.Settings{Limits: cfg.Limits.Domain(), CombosEnabled: cfg.CombosEnabled},
		Menus:     client.For,
		Imports:   &store.Store{DB: db.Gorm},
		Keys:      keys,
		NamingSet: cfg.MenuNamingSet,
	}
	ready := []httpx.Check{{Name: "database", Fn: db.Ping}}
	return lifecycle.Serve(ctx, []lifecycle.Listener{{App: h.App(ready), Addr: cfg.HTTPAddr}, {App: api.Internal(ready, tel.Handler()), Addr: cfg.InternalHTTPAddr}},
		relay,
		lifecycle.Closer{Name: "database", Fn: db.Close},
		lifecycle.Closer{Name: "telemetry", Fn: tel.Shutdown})
}

func migrate(ctx context.Context) error {
	var cfg importconfig.Database
	if err := config.Load(ctx, &cfg); err != nil {
		return err
	}
	db, err := database.Open(ctx, cfg.Database, "catalogimport")
	if err != nil {
		return err
	}
	defer db.Close(ctx)
	res, err := db.Migrate(ctx, migrations.FS, migrations.Go()...)
	if err != nil {
		return err
	}
	slog.Info("catalogimport schema migrated", "applied", len(res))
	return nil
}
