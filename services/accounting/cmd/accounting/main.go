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
	"runtime"
	"time"

	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/services/accounting/internal/config"
	"partnerapi.dev/services/accounting/internal/domain"
	"partnerapi.dev/services/accounting/internal/server"
	"partnerapi.dev/services/accounting/internal/store"
	"partnerapi.dev/services/accounting/migrations"
)

var spec = service.Spec[*config.Serve]{
	Name: "accounting", Migrations: migrations.FS, GoMigrations: service.Steps(migrations.Go()...), Reads: true,
	Build:    server.Build,
	Commands: map[string]service.Command{"import": importRecords},
}

func main() { service.Main(spec) }

// parseResult is a parsed chunk of lines.
type parseResult struct {
	batch domain.Batch
	err   error
}

// parseInOrder reads NDJSON in chunks of lines, parses them on every core
// while the database stores earlier chunks, and hands the batches to add in
// input order; the first bad line (or failed add) stops the reading.
func parseInOrder(ctx context.Context, in io.Reader, lines int, add func(domain.Batch) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := runtime.GOMAXPROCS(0)
	pending := make(chan chan parseResult, 2*workers) // chunks in input order
	sem := make(chan struct{}, workers)
	readErr := make(chan error, 1)
	go func() {
		defer close(pending)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), domain.MaxLine)
		var buf bytes.Buffer
		n, first := 0, 1
		send := func() bool {
			if buf.Len() == 0 {
				return true
			}
			chunk, at, out := bytes.Clone(buf.Bytes()), first, make(chan parseResult, 1)
			buf.Reset()
			first = n + 1
			select {
			case pending <- out:
			case <-ctx.Done():
				return false
			}
			sem <- struct{}{}
			go func() {
				defer func() { <-sem }()
				b, err := domain.ParseLines(bytes.NewReader(chunk), at)
				out <- parseResult{b, err}
			}()
			return true
		}
		for sc.Scan() {
			n++
			buf.Write(sc.Bytes())
			buf.WriteByte('\n')
			if n%lines == 0 && !send() {
				return
			}
		}
		readErr <- sc.Err()
		send()
	}()
	for out := range pending {
		r := <-out
		if r.err != nil {
			return r.err
		}
		if err := add(r.batch); err != nil {
			return err
		}
	}
	return <-readErr
}

// importRecords loads NDJSON in one transaction (parsed and staged in
// batches of lines); a bad line stops the import with its line number and
// nothing of the file is stored.
func importRecords(ctx context.Context, args []string, open func(context.Context) (*database.DB, error)) error {
	// A bulk load's statements may run for minutes: no per-statement bound.
	ctx = database.Unbounded(ctx)
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	file := fs.String("file", "", "NDJSON file of accounting records (default: standard input)")
	batch := fs.Int("batch", 2000, "records parsed and staged at a time")
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
	st := &store.Store{DB: db.Gorm}
	start := time.Now()
	stored := 0
	err = st.BulkIngest(ctx, func(add func(domain.Batch) error) error {
		return parseInOrder(ctx, in, *batch, func(b domain.Batch) error {
			stored += len(b.Sources) + len(b.Refunds)
			return add(b)
		})
	})
	if err != nil {
		return fmt.Errorf("nothing was imported: %w", err)
	}
	slog.Info("accounting records imported", "records", stored, "elapsed", time.Since(start).Round(time.Millisecond).String())
	return nil
}
