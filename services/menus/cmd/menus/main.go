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
	"log/slog"

	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/services/menus/internal/api"
	"partnerapi.dev/services/menus/internal/config"
	"partnerapi.dev/services/menus/internal/domain"
	"partnerapi.dev/services/menus/internal/server"
	"partnerapi.dev/services/menus/internal/store"
	"partnerapi.dev/services/menus/migrations"
)

var spec = service.Spec[*config.Serve]{
	Name: "menus", Migrations: migrations.FS, GoMigrations: service.Steps(migrations.Go()...),
	Build:    server.Build,
	Commands: map[string]service.Command{"import": importCatalogs},
}

func main() { service.Main(spec) }

// importCatalogs loads NDJSON catalogs straight into the schema, as the
// ingestion endpoint does, for a restaurant data set on disk.
func importCatalogs(ctx context.Context, args []string, open func(context.Context) (*database.DB, error)) error {
	// A bulk load's statements may run for minutes: no per-statement bound.
	ctx = database.Unbounded(ctx)
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	file := fs.String("file", "", "NDJSON file of catalogs, one restaurant a line (default: standard input)")
	if err := fs.Parse(args); err != nil {
		return err
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
