// Command seed generates the deterministic demo data set and loads it into
// running services through their admin and ingestion APIs.
//
//	seed [--seed 42] [--size demo|bench] --identity-url URL --orders-url URL --accounting-url URL --menus-url URL
//	seed --size bench --orders-out orders.ndjson   (then: orders import --file orders.ndjson)
//	seed --size bench --accounting-out accounting.ndjson   (then: accounting import --file accounting.ndjson)
//	seed --size bench --bench-orders 5000000 --orders-out -   (a larger bench data set: 100 restaurants)
//
// --identity-url is identity's internal listener (INTERNAL_HTTP_ADDR), where
// the admin API is. ADMIN_TOKEN (identity's admin API) and INGEST_TOKEN
// (orders, accounting and menus ingestion) come from the environment.
// --identity-url "", --orders-url "", --accounting-url "" or --menus-url ""
// skips that part. The accounting records are derived from the same
// generated orders, so the two services agree (docs/accounting.md).
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"partnerapi.dev/pkg/lifecycle"
	"partnerapi.dev/tools/seed"
)

func main() { lifecycle.Main(run) }

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	seedValue := fs.Uint64("seed", 42, "seed of the random source: same seed, same data")
	size := fs.String("size", string(seed.SizeDemo), "demo or bench")
	identityURL := fs.String("identity-url", "http://127.0.0.1:9081", "base URL of identity's internal listener, where the admin API is (empty: skip the directory)")
	ordersURL := fs.String("orders-url", "http://127.0.0.1:8082", "orders service base URL (empty: skip loading orders)")
	menusURL := fs.String("menus-url", "http://127.0.0.1:8085", "menus service base URL (empty: skip loading catalogs and menus)")
	ordersOut := fs.String("orders-out", "", "write the orders as NDJSON to this file ('-' for stdout) instead of loading them")
	accountingURL := fs.String("accounting-url", "http://127.0.0.1:8083", "accounting service base URL (empty: skip loading accounting records)")
	accountingOut := fs.String("accounting-out", "", "write the accounting records as NDJSON to this file ('-' for stdout) instead of loading them")
	benchOrders := fs.Int("bench-orders", seed.BenchOrders, "orders over the bench restaurants (size bench); past 1000000, 50000 per restaurant over more restaurants")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *size != string(seed.SizeDemo) && *size != string(seed.SizeBench) {
		return errors.New("--size must be demo or bench")
	}
	if *benchOrders < 1 {
		return errors.New("--bench-orders must be at least 1")
	}
	g := seed.Generator{Seed: *seedValue, BenchOrderCount: *benchOrders}
	dir := g.GenerateDirectory(seed.Size(*size))
	if *ordersOut != "" || *accountingOut != "" {
		if *ordersOut != "" {
			if err := writeNDJSON("orders", g.GenerateOrders, dir, seed.Size(*size), *ordersOut); err != nil {
				return err
			}
		}
		if *accountingOut != "" {
			return writeNDJSON("accounting records", g.GenerateAccounting, dir, seed.Size(*size), *accountingOut)
		}
		return nil
	}
	if *identityURL != "" {
		if err := loadDirectory(ctx, g, dir, *identityURL); err != nil {
			return err
		}
	}
	if *menusURL != "" {
		if err := loadMenus(ctx, g, dir, seed.Size(*size), *menusURL); err != nil {
			return err
		}
	}
	if *ordersURL != "" {
		if err := loadOrders(ctx, g, dir, seed.Size(*size), *ordersURL); err != nil {
			return err
		}
	}
	if *accountingURL != "" {
		return loadAccounting(ctx, g, dir, seed.Size(*size), *accountingURL)
	}
	return nil
}

func loadAccounting(ctx context.Context, g seed.Generator, dir seed.Directory, size seed.Size, accountingURL string) error {
	ingestToken := os.Getenv("INGEST_TOKEN")
	if ingestToken == "" {
		return errors.New("INGEST_TOKEN must be set (accounting ingestion token)")
	}
	start := time.Now()
	pr, pw := io.Pipe()
	p := newProgress("accounting (orders derived)")
	go func() { pw.CloseWithError(g.GenerateAccounting(dir, size, pw, p.report)) }()
	if err := (seed.Client{}).LoadAccounting(ctx, accountingURL, ingestToken, pr); err != nil {
		pr.CloseWithError(err)
		return err
	}
	p.done(time.Since(start))
	return nil
}

func loadDirectory(ctx context.Context, g seed.Generator, dir seed.Directory, identityURL string) error {
	adminToken := os.Getenv("ADMIN_TOKEN")
	if adminToken == "" {
		return errors.New("ADMIN_TOKEN must be set (identity's admin API token)")
	}
	start := time.Now()
	if err := (seed.Client{}).LoadDirectory(ctx, identityURL, adminToken, dir); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "seed: directory: %d organizations, %d restaurants, %d users, %d partner clients (%s)\n",
		len(dir.Organizations), len(dir.Restaurants), len(dir.Users), len(dir.PartnerClients), time.Since(start).Round(time.Millisecond))
	return nil
}

func loadMenus(ctx context.Context, g seed.Generator, dir seed.Directory, size seed.Size, menusURL string) error {
	ingestToken := os.Getenv("INGEST_TOKEN")
	if ingestToken == "" {
		return errors.New("INGEST_TOKEN must be set (menus ingestion token)")
	}
	start := time.Now()
	catalogs := g.GenerateMenus(dir, size)
	if err := (seed.Client{}).LoadMenus(ctx, menusURL, ingestToken, catalogs); err != nil {
		return err
	}
	items := 0
	for _, c := range catalogs {
		items += len(c.Items)
	}
	fmt.Fprintf(os.Stderr, "seed: menus: %d restaurants, %d catalog items (%s)\n", len(catalogs), items, time.Since(start).Round(time.Millisecond))
	return nil
}

func loadOrders(ctx context.Context, g seed.Generator, dir seed.Directory, size seed.Size, ordersURL string) error {
	ingestToken := os.Getenv("INGEST_TOKEN")
	if ingestToken == "" {
		return errors.New("INGEST_TOKEN must be set (orders ingestion token)")
	}
	start := time.Now()
	pr, pw := io.Pipe()
	p := newProgress("orders")
	go func() { pw.CloseWithError(g.GenerateOrders(dir, size, pw, p.report)) }()
	if err := (seed.Client{}).LoadOrders(ctx, ordersURL, ingestToken, pr); err != nil {
		pr.CloseWithError(err)
		return err
	}
	p.done(time.Since(start))
	return nil
}

type generateFunc func(seed.Directory, seed.Size, io.Writer, func(done, total int)) error

func writeNDJSON(what string, generate generateFunc, dir seed.Directory, size seed.Size, path string) error {
	start := time.Now()
	out := os.Stdout
	if path != "-" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		out = f
	}
	w := bufio.NewWriterSize(out, 1<<20)
	p := newProgress(what)
	if err := generate(dir, size, w, p.report); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	p.done(time.Since(start))
	return nil
}

// progress reports a load on stderr: on a terminal as one updating line,
// elsewhere (a log, a pipe) only as the final line, so a log never holds one
// endless line of carriage returns.
type progress struct {
	what        string
	live        bool
	last        time.Time
	done1, tot1 int
}

func newProgress(what string) *progress { return &progress{what: what, live: isTerminal(os.Stderr)} }

// isTerminal tells whether f is a terminal (a character device).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (p *progress) report(done, total int) {
	p.done1, p.tot1 = done, total
	if !p.live || time.Since(p.last) < 200*time.Millisecond && done != total {
		return
	}
	p.last = time.Now()
	fmt.Fprintf(os.Stderr, "\rseed: %s %d/%d (%d%%)", p.what, done, total, 100*done/max(total, 1))
}

func (p *progress) done(took time.Duration) {
	line := fmt.Sprintf("seed: %s %d/%d loaded in %s\n", p.what, p.done1, p.tot1, took.Round(time.Millisecond))
	if p.live {
		line = "\r" + line
	}
	fmt.Fprint(os.Stderr, line)
}
