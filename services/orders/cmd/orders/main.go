// Command orders serves order search and details, migrates the orders schema
// and imports NDJSON order files.
//
//	orders [serve]                       answer HTTP on HTTP_ADDR (metrics on INTERNAL_HTTP_ADDR)
//	orders migrate                       apply the schema migrations
//	orders import [--file path.ndjson] [--no-events]
//	                                     load orders (stdin when no file) with COPY
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"time"

	"github.com/pressly/goose/v3"
	pkgconfig "partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/services/orders/internal/api"
	"partnerapi.dev/services/orders/internal/config"
	"partnerapi.dev/services/orders/internal/domain"
	"partnerapi.dev/services/orders/internal/server"
	"partnerapi.dev/services/orders/internal/store"
	"partnerapi.dev/services/orders/migrations"
)

var spec = service.Spec[*config.Serve]{
	Name: "orders", Migrations: migrations.FS, GoMigrations: goMigrations, Reads: true,
	Build:    server.Build,
	Commands: map[string]service.Command{"import": importOrders},
}

func main() { service.Main(spec) }

// goMigrations are the schema's Go steps with ORDERS_PARTITIONS applied.
func goMigrations(ctx context.Context) ([]*goose.Migration, error) {
	var cfg config.Migrate
	if err := pkgconfig.Load(ctx, &cfg); err != nil {
		return nil, err
	}
	return migrations.Go(cfg.Partitions), nil
}

func importOrders(ctx context.Context, args []string, open func(context.Context) (*database.DB, error)) error {
	// A bulk load's statements may run for minutes: no per-statement bound.
	ctx = database.Unbounded(ctx)
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	file := fs.String("file", "", "NDJSON file of orders (default: standard input)")
	// Batches in flight (a few per core) are what the import holds in
	// memory, whatever the input's size: 2,000 orders keep it under about
	// 400 MB and COPY as fast as larger batches.
	batch := fs.Int("batch", 2000, "orders per transaction (per COPY into an empty schema); bounds the import's memory")
	// An initial load into an empty schema is the starting state, not a
	// change: it records no events whatever this flag says.
	noEvents := fs.Bool("no-events", false, "record no order events for orders imported into a schema that already holds orders (loads that must not reach partners' feeds)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the import to this file (go tool pprof)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	in, err := service.Input(*file)
	if err != nil {
		return err
	}
	defer in.Close()
	db, err := open(ctx)
	if err != nil {
		return err
	}
	defer db.Close(ctx)
	start := time.Now()
	last := start
	progress := func(stored int) {
		if time.Since(last) > 5*time.Second {
			last = time.Now()
			slog.Info("importing orders", "stored", stored, "elapsed", time.Since(start).Round(time.Second).String())
		}
	}
	if os.Getenv("GOGC") == "" {
		// The import allocates a lot of short-lived records; collect less often.
		debug.SetGCPercent(200)
	}
	st := &store.Store{DB: db.SQL}
	events := domain.OrderEvents{View: api.OrderEventData}.Decide
	if *noEvents {
		events = nil
	}
	// Into an empty schema: one transaction that COPYs every batch and
	// rebuilds the indexes at the end; all or nothing.
	n := 0
	err = st.BulkLoad(ctx, func(sink domain.BatchSink) error {
		var err error
		n, err = domain.Ingestion{Repo: st, BatchSize: *batch, Sink: sink}.Ingest(ctx, in, progress)
		if err == nil {
			slog.Info("orders copied (an initial load records no events), building indexes", "orders", n, "elapsed", time.Since(start).Round(time.Second).String())
		}
		return err
	})
	switch {
	case errors.Is(err, store.ErrNotEmpty):
		// Batches through the replacing upsert, each its own transaction.
		n, err = domain.Ingestion{Repo: st, BatchSize: *batch, Events: events}.Ingest(ctx, in, progress)
		if err != nil {
			return fmt.Errorf("import stopped after %d orders: %w", n, err)
		}
	case err != nil:
		return fmt.Errorf("import into the empty schema failed, nothing was stored: %w", err)
	}
	slog.Info("orders stored and indexed, gathering the planner's statistics", "orders", n, "elapsed", time.Since(start).Round(time.Second).String())
	if _, err := db.SQL.ExecContext(ctx, "ANALYZE orders, order_details, order_item_keys"); err != nil {
		return err
	}
	slog.Info("orders imported", "orders", n, "elapsed", time.Since(start).Round(time.Millisecond).String())
	return nil
}
