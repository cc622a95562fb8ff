// Command accounting serves payment reports, refund events and payment
// corrections, migrates the accounting schema and imports NDJSON accounting
// records.
//
//	accounting [serve]                       answer HTTP on HTTP_ADDR (metrics on INTERNAL_HTTP_ADDR)
//	accounting migrate                       apply the schema migrations
//	accounting import [--file path.ndjson]   load payment sources and refund events (stdin when no file)
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/cursor"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/lifecycle"
	"partnerapi.dev/pkg/telemetry"
	"partnerapi.dev/services/accounting/internal/api"
	acctconfig "partnerapi.dev/services/accounting/internal/config"
	"partnerapi.dev/services/accounting/internal/domain"
	"partnerapi.dev/services/accounting/internal/store"
	"partnerapi.dev/services/accounting/migrations"
	"partnerapi.dev/services/contracts/eventsclient"
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
		return importRecords(ctx, args)
	}
	return fmt.Errorf("unknown command %q: use serve, migrate or import", cmd)
}

func serve(ctx context.Context) error {
	var cfg acctconfig.Serve
	if err := config.Load(ctx, &cfg); err != nil {
		return err
	}
	keys, _ := internalctx.ParseKeys(cfg.InternalContextKeys.Reveal())
	cursorKey, _ := cfg.CursorKeyBytes()
	tel, err := telemetry.Setup(ctx, "accounting", telemetry.Options{})
	if err != nil {
		return err
	}
	db, err := database.Open(ctx, cfg.Database, "accounting")
	if err != nil {
		return err
	}
	relay := eventsclient.StartRelay(ctx, db.Gorm, cfg.Events, "accounting")
	svc := &domain.Service{Repo: &store.Store{DB: db.Gorm}}
	h := &api.Handlers{Service: svc, Cursors: cursor.New(cursorKey), Keys: keys, IngestToken: cfg.IngestToken.Reveal()}
	ready := []httpx.Check{{Name: "database", Fn: db.Ping}}
	return lifecycle.Serve(ctx, []lifecycle.Listener{{App: h.App(ready), Addr: cfg.HTTPAddr}, {App: api.Internal(ready, tel.Handler()), Addr: cfg.InternalHTTPAddr}},
		relay,
		lifecycle.Closer{Name: "database", Fn: db.Close},
		lifecycle.Closer{Name: "telemetry", Fn: tel.Shutdown})
}

func openDatabase(ctx context.Context) (*database.DB, error) {
	var cfg acctconfig.Database
	if err := config.Load(ctx, &cfg); err != nil {
		return nil, err
	}
	return database.Open(ctx, cfg.Database, "accounting")
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
	slog.Info("accounting schema migrated", "applied", len(res))
	return nil
}

// importRecords loads NDJSON in batches of lines, each batch one
// transaction; a bad line stops the import with its line number.
func importRecords(ctx context.Context, args []string) error {
	// A bulk load's statements may run for minutes: no per-statement bound.
	ctx = database.Unbounded(ctx)
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	file := fs.String("file", "", "NDJSON file of accounting records (default: standard input)")
	batch := fs.Int("batch", 2000, "records per transaction")
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
	st := &store.Store{DB: db.Gorm}
	start := time.Now()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), domain.MaxLine)
	var buf bytes.Buffer
	lines, stored, first := 0, 0, 1
	flush := func() error {
		if buf.Len() == 0 {
			return nil
		}
		b, err := domain.ParseLines(bytes.NewReader(buf.Bytes()), first)
		if err != nil {
			return fmt.Errorf("nothing of lines %d to %d was stored: %w", first, lines, err)
		}
		if err := st.Ingest(ctx, b); err != nil {
			return fmt.Errorf("import stopped after %d records: %w", stored, err)
		}
		stored += len(b.Sources) + len(b.Refunds)
		buf.Reset()
		first = lines + 1
		return nil
	}
	for sc.Scan() {
		lines++
		buf.Write(sc.Bytes())
		buf.WriteByte('\n')
		if lines%*batch == 0 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	slog.Info("accounting records imported", "records", stored, "elapsed", time.Since(start).Round(time.Millisecond).String())
	return nil
}
