// Command faults is the fault suite behind make faults: it starts the whole
// system (bin/devstack with the demo data) on a Postgres and a Redis of its
// own, puts partner load of reads and of every write operation on it
// through the gateway, and injects faults one after another: Postgres
// paused and resumed (a frozen host: connections accepted, nothing
// answered), Postgres shut down and restarted, Redis paused and resumed,
// Redis killed and restarted, the menus service stopped. Every write is
// sent twice at once with the same idempotency key and replayed after the
// faults.
//
// It then checks, through the API and in the database, that every
// acknowledged write took effect exactly once and no write took effect
// twice or in part, that no answer was a 5xx other than a 503 envelope,
// and that latency is back to normal within a few seconds of each
// recovery. It prints a table per fault and exits 1 on any violation.
//
// The load is made of scenarios (chain), each a few keyed writes built
// from the answers of the ones before (keyed.go); menus.go, accounting.go
// and webhooks.go hold the scenarios and their checks.
//
// Run from the repository root after make build (binaries are read from bin/).
// See docs/reliability.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"

	"partnerapi.dev/pkg/localinfra"
	"partnerapi.dev/tools/seed"
	"partnerapi.dev/tools/system"
)

// scopes is every scope the load's operations need.
const scopes = "svc.restaurant.read svc.orders.read svc.accounting.read svc.analytics.read svc.accounting.corrections.write " +
	"svc.menu.read svc.menu.structure.write svc.menu.publish.write svc.catalog.import.write svc.webhooks.manage"

func main() {
	bin := flag.String("bin", "bin", "folder with the built binaries")
	workers := flag.Int("workers", 6, "concurrent partner clients")
	during := flag.Duration("during", 4*time.Second, "how long each fault lasts")
	after := flag.Duration("after", 5*time.Second, "load after each recovery")
	out := flag.String("out", "", "also write the result table to this Markdown file")
	only := flag.String("only", "", "run only the faults whose name contains this text (the baseline always runs)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *bin, *workers, *during, *after, *out, *only); err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		os.Exit(1)
	}
}

// fault is one row of the table.
type fault struct {
	name    string
	inject  func() error
	recover func() error
	// strict: no 5xx at all, not even 503 (a rolling restart).
	strict  bool
	measure measure
}

type measure int

const (
	measureNone   measure = iota
	measureHung           // the 503 latency while the database hangs
	measureSwitch         // what a read pays once Redis hangs (switchProbe)
)

func run(ctx context.Context, bin string, workers int, during, after time.Duration, out, only string) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "faults-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	in := &infra{dir: dir, startCtx: ctx}
	if in.pgPort, err = localinfra.FreePort(); err != nil {
		return err
	}
	if in.redisPort, err = localinfra.FreePort(); err != nil {
		return err
	}
	logf("starting Postgres and Redis")
	if err := in.startPostgres(); err != nil {
		return err
	}
	defer func() { _ = in.pg.Resume(); _ = in.pg.Stop() }()
	if err := in.startRedis(); err != nil {
		return err
	}
	defer func() { _ = in.redis.Resume(); _ = in.redis.Stop() }()

	// The other processes reach the menus and accounting services through
	// a balancer each, as through a Kubernetes Service, so that a rolling
	// restart can put a second replica behind it.
	rolled := []string{"menus", "accounting"}
	bals, upstreams := map[string]*balancer{}, map[string]string{}
	for _, name := range rolled {
		b, err := startBalancer()
		if err != nil {
			return err
		}
		defer b.close()
		bals[name], upstreams[name] = b, b.url()
	}
	logf("starting the system (bin/devstack) with the demo data")
	env := append(withoutEnv("DATABASE_URL", "REDIS_URL", "TEST_DATABASE_URL", "TEST_REDIS_URL"),
		"DATABASE_URL="+in.pgURL, "REDIS_URL="+in.redisURL, "RATE_LIMIT_PER_MINUTE=100000000", "LOG_LEVEL=error")
	stack, err := system.Start(ctx, system.Options{Bin: bin, Dir: filepath.Join(dir, "run"), Env: env, Upstreams: upstreams})
	if err != nil {
		return err
	}
	defer stack.Stop()
	for _, name := range rolled {
		bals[name].add(stack.Public[name], stack.Internal[name])
	}
	token, err := demoToken(ctx, bin, stack.Gateway)
	if err != nil {
		return err
	}
	g := seed.Generator{Seed: 42}
	l := &load{base: stack.Gateway, token: token, restaurant: g.ID("restaurant/kahvila-aalto"),
		client: &http.Client{Timeout: 15 * time.Second}, runID: uuid.NewString()[:8], days: newDayPool(60)}
	if l.items, err = l.catalogItems(ctx, g.ID("menu/"+l.restaurant+"/main")); err != nil {
		return err
	}

	roll := func(name string) *rollingRestart {
		return &rollingRestart{ctx: ctx, bal: bals[name], devstack: stack.PID, bin: bin, name: name, internal: stack.Internal[name]}
	}
	menus, accounting := roll("menus"), roll("accounting")
	// Closures: a restarted server is a new one.
	faults := []fault{
		{name: "none (baseline)", inject: func() error { return nil }, recover: func() error { return nil }},
		{name: "Postgres paused (SIGSTOP), resumed", inject: func() error { return in.pg.Pause() }, recover: func() error { return in.pg.Resume() }, measure: measureHung},
		{name: "Postgres shut down, restarted", inject: func() error { return in.pg.Stop() }, recover: in.startPostgres},
		{name: "Redis paused (SIGSTOP), resumed", inject: func() error { return in.redis.Pause() }, recover: func() error { return in.redis.Resume() }, measure: measureSwitch},
		{name: "Redis killed (SIGKILL), restarted", inject: func() error { return in.redis.Kill() }, recover: in.startRedis},
		{name: "menus service stopped (SIGTERM), restarted", inject: func() error { return terminate(stack.PID(), "menus") },
			recover: func() error { return waitReady(ctx, stack.Internal["menus"]) }},
		{name: "menus rolling restart (2 replicas, each stopped with SIGTERM while serving)", inject: menus.inject, recover: menus.recover, strict: true},
		{name: "accounting rolling restart (2 replicas, each stopped with SIGTERM while serving)", inject: accounting.inject, recover: accounting.recover, strict: true},
	}

	lctx, cancelLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() { defer wg.Done(); l.worker(lctx, w) }()
	}
	webhooks := func() {
		c := l.webhookChain(ctx, l.next())
		l.addChain(c)
		l.runChain(ctx, c)
	}
	var results []result
	for i, f := range faults {
		if i > 0 && !strings.Contains(f.name, only) {
			continue
		}
		logf("fault: %s", f.name)
		var probe switchProbe
		if f.measure == measureSwitch {
			probe.before = l.probeReads(ctx, 100, 0)
		}
		start := time.Now()
		if err := f.inject(); err != nil {
			cancelLoad()
			wg.Wait()
			return fmt.Errorf("inject %s: %w", f.name, err)
		}
		if f.measure == measureSwitch {
			probe.after = l.probeReads(ctx, 1, time.Second)
		}
		// One webhook scenario in the middle of the fault and one after
		// the recovery.
		sleep(ctx, during/2)
		webhooks()
		sleep(ctx, time.Until(start.Add(during)))
		if err := f.recover(); err != nil {
			cancelLoad()
			wg.Wait()
			return fmt.Errorf("recover from %s: %w", f.name, err)
		}
		recovered := time.Now()
		sleep(ctx, after/2)
		webhooks()
		sleep(ctx, time.Until(recovered.Add(after)))
		r := l.summarize(f, start, recovered, time.Now())
		if f.measure == measureSwitch {
			probe.judge(&r)
		}
		results = append(results, r)
	}
	cancelLoad()
	wg.Wait()

	ops := map[string]*opCount{}
	for _, c := range l.chains {
		for _, w := range c.writes {
			o := ops[w.op]
			if o == nil {
				o = &opCount{}
				ops[w.op] = o
			}
			o.keys++
			o.conflicts += w.conflicts
			if w.acked {
				o.acked++
			}
		}
	}
	logf("replaying every write of %d scenarios with its idempotency key", len(l.chains))
	replayViolations := l.replayAll(ctx, workers)
	logf("checking effects through the API and in the database")
	effectViolations, err := l.checkEffects(ctx, in.pgURL)
	if err != nil {
		return err
	}
	effectViolations = append(effectViolations, l.checkEvents(ctx)...)
	table := render(results, ops, replayViolations, effectViolations)
	fmt.Print(table)
	if out != "" {
		if err := writeTable(out, table); err != nil {
			return err
		}
	}
	total := len(replayViolations) + len(effectViolations)
	for _, r := range results {
		total += r.violations
	}
	if total > 0 {
		return fmt.Errorf("%d violations", total)
	}
	return nil
}

// catalogItems reads two catalog items off a menu.
func (l *load) catalogItems(ctx context.Context, menuID string) ([]string, error) {
	var page struct {
		Data struct {
			Items []struct {
				CatalogItemID string `json:"catalogItemId"`
			} `json:"items"`
		} `json:"data"`
	}
	if !l.get(ctx, "menu items", l.path("/menus/"+menuID+"/items?limit=2"), &page) || len(page.Data.Items) != 2 {
		return nil, fmt.Errorf("menu items of %s unreadable", menuID)
	}
	return []string{page.Data.Items[0].CatalogItemID, page.Data.Items[1].CatalogItemID}, nil
}
