// Command menus serves the menu operations, the internal catalog API and the
// catalog ingestion endpoint, and migrates the menus schema.
//
//	menus [serve]                        answer HTTP on HTTP_ADDR (metrics on INTERNAL_HTTP_ADDR)
//	menus migrate                        apply the schema migrations
//	menus import [--file path.ndjson]    load catalogs (one restaurant a line; stdin when no file)
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/lifecycle"
	"partnerapi.dev/pkg/telemetry"
	"partnerapi.dev/services/contracts/eventsclient"
	"partnerapi.dev/services/menus/internal/api"
	menusconfig "partnerapi.dev/services/menus/internal/config"
	"partnerapi.dev/services/menus/internal/domain"
	"partnerapi.dev/services/menus/internal/store"
	"partnerapi.dev/services/menus/migrations"
)

func main() { lifecycle.Main(run) }

func run(ctx context.Context, args []string) error {
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx)
	case "migrate":
		return migrate(ctx)
	case "import":
		return importCatalogs(ctx, args)
	}
	return fmt.Errorf("unknown command %q: use serve, migrate or import", cmd)
}

func serve(ctx context.Context) error {
	var cfg menusconfig.Serve
	if err := config.Load(ctx, &cfg); err != nil {
		return err
	}
	keys, _ := internalctx.ParseKeys(cfg.InternalContextKeys.Reveal())
	tel, err := telemetry.Setup(ctx, "menus", telemetry.Options{})
	if err != nil {
		return err
	}
	db, err := database.Open(ctx, cfg.Database, "menus")
	if err != nil {
		return err
	}
	relay := eventsclient.StartRelay(ctx, db.Gorm, cfg.Events, "menus")
	h := &api.Handlers{Repo: &store.Store{DB: db.Gorm}, Keys: keys, IngestToken: cfg.IngestToken.Reveal(), NamingSet: cfg.MenuNamingSet}
	ready := []httpx.Check{{Name: "database", Fn: db.Ping}}
	return lifecycle.Serve(ctx, []lifecycle.Listener{{App: h.App(ready), Addr: cfg.HTTPAddr}, {App: api.Internal(ready, tel.Handler()), Addr: cfg.InternalHTTPAddr}},
		relay,
		lifecycle.Closer{Name: "database", Fn: db.Close},
		lifecycle.Closer{Name: "telemetry", Fn: tel.Shutdown})
}

func openDatabase(ctx context.Context) (*database.DB, error) {
	var cfg menusconfig.Database
	if err := config.Load(ctx, &cfg); err != nil {
		return nil, err
	}
	return database.Open(ctx, cfg.Database, "menus")
}

func migrate(ctx context.Context) error {
	db, err := openDatabase(ctx)
	if err != nil {
		return err
	}
	defer db.Close(ctx)
	res, err := db.Migrate(ctx, migrations.FS, migrations.Go()...)
	if err != nil {
		return err
	}
	slog.Info("menus schema migrated", "applied", len(res))
	return nil
}

// importCatalogs loads NDJSON catalogs straight into the schema, as the
// ingestion endpoint does, for a restaurant data set on disk.
func importCatalogs(ctx context.Context, args []string) error {
	// A bulk load's statements may run for minutes: no per-statement bound.
	ctx = database.Unbounded(ctx)
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	file := fs.String("file", "", "NDJSON file of catalogs, one restaurant a line (default: standard input)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var in io.Reader = os.Stdin
	if *file != "" && *file != "-" {
		f, err := os.Open(*file)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	db, err := openDatabase(ctx)
	if err != nil {
		return err
	}
	defer db.Close(ctx)
	if _, err := db.Migrate(ctx, migrations.FS, migrations.Go()...); err != nil {
		return err
	}
	// Every line is read and checked before anything is stored.
	var catalogs []domain.Snapshot
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 1<<20), api.IngestBodyLimit)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var snap domain.Snapshot
		if err := json.Unmarshal(sc.Bytes(), &snap); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		if err := domain.CheckSnapshot(snap); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		catalogs = append(catalogs, snap)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if err := (&store.Store{DB: db.Gorm}).Ingest(ctx, catalogs); err != nil {
		return err
	}
	n := len(catalogs)
	slog.Info("catalogs imported", "restaurants", n)
	return nil
}
