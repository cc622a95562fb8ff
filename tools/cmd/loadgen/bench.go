package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/localinfra"
	"partnerapi.dev/tools/loadgen"
	"partnerapi.dev/tools/seed"
	"partnerapi.dev/tools/system"
)

// targets are where each measured request goes: the process directly, and
// through the gateway.
var targets = []string{"service", "gateway"}

// benchFlags are the flags every bench-data-set load test takes.
type benchFlags struct {
	bin      string
	data     string
	requests int
	warmup   int
	keep     bool
	orders   int
	// sharedBuffers is the bench Postgres's shared_buffers; prewarm reads
	// the measured tables into them before measuring.
	sharedBuffers string
	prewarm       bool
}

func (f *benchFlags) register(fs *flag.FlagSet, requests, warmup int) {
	fs.StringVar(&f.bin, "bin", "bin", "folder with the built binaries (make build)")
	fs.StringVar(&f.data, "data", "", "folder for the Postgres data (several GB), kept; a second run reuses the loaded data. Default: a new temporary folder, removed at the end")
	fs.IntVar(&f.requests, "requests", requests, "sequential requests per class and target")
	fs.IntVar(&f.warmup, "warmup", warmup, "unmeasured requests per class and target before the measured ones")
	fs.BoolVar(&f.keep, "keep", false, "keep the data folder")
	fs.StringVar(&f.sharedBuffers, "shared-buffers", memoryShare(40), "shared_buffers of the bench Postgres (default: 40% of this machine's memory, the most the Postgres documentation advises; the searched tables and the pages the answers read besides fit at 5M orders)")
	fs.BoolVar(&f.prewarm, "prewarm", true, "before measuring, read the measured tables and their indexes into shared_buffers (pg_prewarm), so every data set size is measured warm; false leaves every page to be read when a request first needs it")
	fs.IntVar(&f.orders, "orders", seed.BenchOrders, "orders over the bench restaurants (bin/seed --bench-orders); past 1000000, more restaurants with the same history each")
}

// benchOptions says what a load test adds to the shared bench setup.
type benchOptions struct {
	name   string // database loadgen_<name>, temporary folder loadgen-<name>-*
	scopes string // of the bench administrator's token
	// load runs after the orders are loaded, before the stack starts, with
	// the database URL; it answers a line for the report.
	load func(ctx context.Context, e *benchEnv) (string, error)
	// prewarmTables (schema.table) are read into shared_buffers with their
	// indexes by -prewarm; prewarmIndexesOf only their indexes (tables the
	// searches read index-only).
	prewarmTables, prewarmIndexesOf []string
	// seedArgs are extra bin/seed arguments of the bench directory load
	// (identity is always loaded); INGEST_TOKEN is set.
	seedArgs func(s *system.Stack) []string
}

// benchEnv is a running stack on a database loaded with the bench data set,
// and a token of the bench organization's administrator.
type benchEnv struct {
	ctx         context.Context
	bin, dir    string
	dbURL       string
	orders      int64
	importLines []string // how the data was loaded
	stack       *system.Stack
	org         string
	scopes      string
	tokenMu     sync.Mutex
	token       string
	claims      system.Claims
	keys        *internalctx.Keyring
	restaurants []seed.Restaurant // of the bench organization
	client      *http.Client
	closers     []func()
}

// startBench starts a Postgres of its own, loads the bench orders (unless
// the database already holds orders), runs o.load, starts the stack on that
// database with the partner rate limit out of the way, loads the bench
// directory and gets the bench administrator's token.
func startBench(ctx context.Context, f benchFlags, o benchOptions) (_ *benchEnv, err error) {
	if f.orders < 1 {
		return nil, errors.New("-orders must be at least 1")
	}
	e := &benchEnv{ctx: ctx}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	if e.bin, err = filepath.Abs(f.bin); err != nil {
		return nil, err
	}
	dir := f.data
	if dir == "" {
		if dir, err = os.MkdirTemp("", "loadgen-"+o.name+"-"); err != nil {
			return nil, err
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if e.dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	if f.keep || f.data != "" {
		logf("data in %s (kept)", e.dir)
	} else {
		e.closers = append(e.closers, func() { os.RemoveAll(e.dir) })
	}
	// A fresh Postgres of our own (fsync off: this measures queries, not durability).
	logf("starting postgres (data in %s); load %s", e.dir, loadgen.Load())
	pg, err := localinfra.StartPostgres(ctx, localinfra.PostgresOptions{Dir: filepath.Join(e.dir, "postgres"), SharedBuffers: f.sharedBuffers})
	if err != nil {
		return nil, err
	}
	e.closers = append(e.closers, func() { _ = pg.Stop() })
	if e.dbURL, err = createDatabase(ctx, pg.URL, "loadgen_"+o.name); err != nil {
		return nil, err
	}

	count, err := countOrders(ctx, e.dbURL)
	var line string
	if err == nil && count > 0 {
		line = fmt.Sprintf("reused the %d orders already loaded in %s (no import timed; -orders does not apply)", count, e.dir)
	} else {
		// A million orders take about 3.6 GB (2.5 GB of tables and indexes,
		// 1.1 GB of WAL); the database grows with the orders. A data set
		// already loaded needs no more.
		need := int64(3<<30) + int64(f.orders)*(3<<30)/1_000_000
		if free := freeBytes(e.dir); free >= 0 && free < need {
			return nil, fmt.Errorf("%s has %.1f GB free; the bench data set needs about %.0f GB (use --data)", e.dir, float64(free)/(1<<30), float64(need)/(1<<30))
		}
		loadStart := loadgen.Load()
		took, peak, err := importBench(ctx, e.bin, e.dbURL, f.orders)
		if err != nil {
			return nil, err
		}
		if count, err = countOrders(ctx, e.dbURL); err != nil {
			return nil, err
		}
		line = fmt.Sprintf("bin/seed --size bench --bench-orders %d --orders-out - | bin/orders import: %d orders in %s (%.0f orders/s; import peak memory %d MB; load before %s, after %s)",
			f.orders, count, took.Round(100*time.Millisecond), float64(count)/took.Seconds(), peak>>20, loadStart, loadgen.Load())
	}
	e.orders = count
	logf("%s", line)
	e.importLines = append(e.importLines, line)
	if o.load != nil {
		line, err := o.load(ctx, e)
		if err != nil {
			return nil, err
		}
		logf("%s", line)
		e.importLines = append(e.importLines, line)
	}

	if f.prewarm && len(o.prewarmTables)+len(o.prewarmIndexesOf) > 0 {
		line, err := prewarm(ctx, e.dbURL, o.prewarmTables, o.prewarmIndexesOf)
		if err != nil {
			return nil, err
		}
		line += " (shared_buffers " + f.sharedBuffers + ")"
		logf("%s", line)
		e.importLines = append(e.importLines, line)
	}

	logf("starting the stack on that database")
	e.stack, err = system.Start(ctx, system.Options{
		Bin: e.bin, Dir: filepath.Join(e.dir, "stack"),
		Env: append(withoutEnv("DATABASE_URL", "REDIS_URL"), "DATABASE_URL="+e.dbURL, "RATE_LIMIT_PER_MINUTE=100000000"),
	})
	if err != nil {
		return nil, err
	}
	e.closers = append(e.closers, e.stack.Stop)

	g := seed.Generator{Seed: 42, BenchOrderCount: f.orders}
	e.org = g.ID("organization/bench")
	logf("loading the bench directory (organization %s)", e.org)
	args := []string{"--size", "bench", "--bench-orders", fmt.Sprint(f.orders), "--identity-url", e.stack.Internal["identity"], "--orders-url", "", "--accounting-url", "", "--menus-url", ""}
	if o.seedArgs != nil {
		args = append(args, o.seedArgs(e.stack)...)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(e.bin, "seed"), args...)
	cmd.Env = append(os.Environ(), "ADMIN_TOKEN="+e.stack.Secrets["ADMIN_TOKEN"], "INGEST_TOKEN="+e.stack.Secrets["INGEST_TOKEN"])
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("seed the bench directory: %w\n%s", err, out)
	}
	e.scopes = o.scopes
	if _, _, err = e.bearer(); err != nil {
		return nil, err
	}
	if e.keys, err = internalctx.ParseKeys(e.stack.Secrets["INTERNAL_CONTEXT_KEYS"]); err != nil {
		return nil, err
	}
	for _, r := range g.GenerateDirectory(seed.SizeBench).Restaurants {
		if slices.Contains(r.OrganizationIDs, e.org) {
			e.restaurants = append(e.restaurants, r)
		}
	}
	e.client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	return e, nil
}

// bearer is the bench administrator's access token and its claims, minted
// again when it has less than two minutes left: a run that loads 10M
// orders outlives an access token (15 minutes by default).
func (e *benchEnv) bearer() (string, system.Claims, error) {
	e.tokenMu.Lock()
	defer e.tokenMu.Unlock()
	if e.token != "" && time.Until(time.Unix(e.claims.Expiry, 0)) > 2*time.Minute {
		return e.token, e.claims, nil
	}
	token, err := benchToken(e.ctx, e.bin, e.stack.Gateway, e.org, e.scopes)
	if err != nil {
		return "", system.Claims{}, err
	}
	claims, err := system.TokenClaims(token)
	if err != nil {
		return "", system.Claims{}, err
	}
	e.token, e.claims = token, claims
	return token, claims, nil
}

// Close stops the stack and Postgres and removes a temporary data folder.
func (e *benchEnv) Close() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		e.closers[i]()
	}
	e.closers = nil
}

// send makes one partner request about restaurant r: via "gateway" with the
// bearer token, via "service" straight to the named process (registry
// name) with an internal context signed for the same client, user and
// grant. path follows /v1/restaurants/{id}; body, when not nil, is sent as
// JSON. The duration is the request's round trip at the client.
func (e *benchEnv) send(via, service, method string, r seed.Restaurant, path string, body any) (int, []byte, time.Duration, error) {
	token, claims, err := e.bearer()
	if err != nil {
		return 0, nil, 0, err
	}
	base, h := e.stack.Gateway, http.Header{"Authorization": {"Bearer " + token}}
	if via == "service" {
		base = e.stack.Public[service]
		h = http.Header{internalctx.Header: {e.keys.Sign(internalctx.Context{
			ClientID: claims.ClientID, UserID: claims.Subject, GrantID: claims.GrantID, Scopes: strings.Fields(claims.Scope),
			Tenant:         &internalctx.Tenant{ID: r.RestaurantID, TimeZone: r.TimeZone, DayStartHour: *r.DayStartHour, Currency: r.Currency, Country: r.Country},
			OrganizationID: e.org, RequestID: "loadgen"})}}
	}
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, nil, 0, err
		}
		rd = bytes.NewReader(raw)
		h.Set("Content-Type", "application/json")
	}
	req, err := http.NewRequestWithContext(e.ctx, method, base+"/v1/restaurants/"+r.RestaurantID+path, rd)
	if err != nil {
		return 0, nil, 0, err
	}
	req.Header = h
	start := time.Now()
	resp, err := e.client.Do(req)
	if err != nil {
		return 0, nil, 0, err
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, raw, time.Since(start), err
}

// prewarm reads tables with their indexes, and the indexes of indexesOf,
// into shared_buffers (pg_prewarm, shipped with Postgres), so a measurement
// meets the warm cache of a database in service rather than pages it has not
// read yet; it answers a line for the report.
func prewarm(ctx context.Context, dbURL string, tables, indexesOf []string) (string, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	start := time.Now()
	if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_prewarm"); err != nil {
		return "", fmt.Errorf("create extension pg_prewarm: %w", err)
	}
	var blocks int64
	// A partitioned table is read partition by partition (pg_partition_tree
	// gives a plain table itself).
	err = conn.QueryRow(ctx, `
		WITH t AS (SELECT p.relid FROM unnest($1::text[]) n, pg_partition_tree(n::regclass) p WHERE p.isleaf),
		     i AS (SELECT p.relid FROM unnest($2::text[]) n, pg_partition_tree(n::regclass) p WHERE p.isleaf)
		SELECT coalesce(sum(pg_prewarm(r)), 0) FROM (
			SELECT relid AS r FROM t
			UNION ALL
			SELECT indexrelid FROM pg_index WHERE indrelid IN (SELECT relid FROM t UNION ALL SELECT relid FROM i)
		) rels`, tables, indexesOf).Scan(&blocks)
	if err != nil {
		return "", fmt.Errorf("pg_prewarm: %w", err)
	}
	what := strings.Join(tables, ", ") + " with their indexes"
	if len(indexesOf) > 0 {
		what += ", the indexes of " + strings.Join(indexesOf, ", ")
	}
	return fmt.Sprintf("pg_prewarm: %s, %d MB in %s", what, blocks*8192>>20, time.Since(start).Round(100*time.Millisecond)), nil
}

// memoryShare is percent of this machine's memory as a Postgres setting
// ("9641MB"), or 256MB when /proc/meminfo cannot tell.
func memoryShare(percent int64) string {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "256MB"
	}
	for line := range strings.Lines(string(b)) {
		var kb int64
		if _, err := fmt.Sscanf(line, "MemTotal: %d kB", &kb); err == nil {
			return fmt.Sprintf("%dMB", kb*percent/100>>10)
		}
	}
	return "256MB"
}
