// Command faults is the fault suite behind make faults: it starts the whole
// system (bin/devstack with the demo data) on a Postgres and a Redis of its
// own, puts partner load of reads and writes on it through the gateway, and
// injects faults one after another: Postgres paused and resumed (a frozen
// host: connections accepted, nothing answered), Postgres shut down and
// restarted, Redis paused and resumed, Redis killed and restarted. Every write
// is sent twice at once with the same idempotency key and replayed after the
// faults.
//
// It then checks, through the API and in the database, that every
// acknowledged write took effect exactly once and no write took effect twice,
// that no answer was a 5xx other than a 503 envelope, and that latency is
// back to normal within a few seconds of each recovery. It prints a table
// per fault and exits 1 on any violation.
//
// Run from the repository root after make build (binaries are read from bin/).
// See docs/reliability.md.
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
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"partnerapi.dev/pkg/localinfra"
	"partnerapi.dev/tools/loadgen"
	"partnerapi.dev/tools/seed"
)

// scopes is every scope the load's operations need.
const scopes = "svc.restaurant.read svc.orders.read svc.accounting.read svc.menu.read svc.menu.structure.write svc.menu.publish.write svc.webhooks.manage"

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

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, "faults: "+format+"\n", args...) }

type infra struct {
	dir       string
	pgPort    int
	redisPort int
	pg, redis *localinfra.Server
	pgURL     string
	redisURL  string
	startCtx  context.Context
}

func (in *infra) startPostgres() error {
	pg, err := localinfra.StartPostgres(in.startCtx, localinfra.PostgresOptions{Dir: filepath.Join(in.dir, "postgres"), Port: in.pgPort})
	if err != nil {
		return err
	}
	in.pg, in.pgURL = pg, pg.URL
	return nil
}

func (in *infra) startRedis() error {
	rd, err := localinfra.StartRedis(in.startCtx, localinfra.RedisOptions{Dir: filepath.Join(in.dir, "redis"), Port: in.redisPort})
	if err != nil {
		return err
	}
	in.redis, in.redisURL = rd, rd.URL
	return nil
}

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

	logf("starting the system (bin/devstack) with the demo data")
	env := append(withoutEnv("DATABASE_URL", "REDIS_URL", "TEST_DATABASE_URL", "TEST_REDIS_URL"),
		"DATABASE_URL="+in.pgURL, "REDIS_URL="+in.redisURL, "RATE_LIMIT_PER_MINUTE=100000000", "LOG_LEVEL=error")
	stack, err := loadgen.StartStack(ctx, loadgen.StackOptions{Bin: bin, Dir: filepath.Join(dir, "run"), Env: env})
	if err != nil {
		return err
	}
	defer stack.Stop()
	token, err := demoToken(ctx, bin, stack.Gateway)
	if err != nil {
		return err
	}
	g := seed.Generator{Seed: 42}
	l := &load{base: stack.Gateway, token: token, restaurant: g.ID("restaurant/kahvila-aalto"),
		client: &http.Client{Timeout: 15 * time.Second}, runID: uuid.NewString()[:8]}
	if l.items, err = l.catalogItems(ctx, g.ID("menu/"+l.restaurant+"/main")); err != nil {
		return err
	}

	// Closures: a restarted server is a new one.
	faults := []fault{
		{name: "none (baseline)", inject: func() error { return nil }, recover: func() error { return nil }},
		{name: "Postgres paused (SIGSTOP), resumed", inject: func() error { return in.pg.Pause() }, recover: func() error { return in.pg.Resume() }},
		{name: "Postgres shut down, restarted", inject: func() error { return in.pg.Stop() }, recover: in.startPostgres},
		{name: "Redis paused (SIGSTOP), resumed", inject: func() error { return in.redis.Pause() }, recover: func() error { return in.redis.Resume() }},
		{name: "Redis killed (SIGKILL), restarted", inject: func() error { return in.redis.Kill() }, recover: in.startRedis},
		{name: "menus service stopped (SIGTERM), restarted", inject: func() error { return terminate(stack.PID(), "menus") },
			recover: func() error { return waitReady(ctx, stack.Internal["menus"]) }},
	}

	lctx, cancelLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() { defer wg.Done(); l.worker(lctx, w) }()
	}
	var results []result
	for i, f := range faults {
		if i > 0 && !strings.Contains(f.name, only) {
			continue
		}
		logf("fault: %s", f.name)
		start := time.Now()
		if err := f.inject(); err != nil {
			cancelLoad()
			wg.Wait()
			return fmt.Errorf("inject %s: %w", f.name, err)
		}
		// One webhook endpoint created in the middle of the fault and one
		// after the recovery: the restaurant holds at most 20 endpoints.
		sleep(ctx, during/2)
		l.webhookTwice(ctx)
		sleep(ctx, during/2)
		if err := f.recover(); err != nil {
			cancelLoad()
			wg.Wait()
			return fmt.Errorf("recover from %s: %w", f.name, err)
		}
		recovered := time.Now()
		sleep(ctx, after/2)
		l.webhookTwice(ctx)
		sleep(ctx, after/2)
		results = append(results, l.summarize(f.name, start, recovered, time.Now(), after))
	}
	cancelLoad()
	wg.Wait()

	acked, publishes, publishAcked, conflicts := 0, 0, 0, 0
	for _, w := range l.writes {
		if w.acked {
			acked++
		}
		if w.itemsAcked {
			acked++
		}
		if w.publish != nil {
			publishes++
			if w.publish.acked {
				acked++
				publishAcked++
			}
			conflicts += w.publish.conflicts
		}
	}
	for _, h := range l.hooks {
		if h.acked {
			acked++
		}
	}
	logf("replaying every write with its idempotency key")
	replayViolations := l.replay(ctx)
	logf("checking effects through the API and in the database")
	effectViolations, err := l.checkEffects(ctx, in.pgURL)
	if err != nil {
		return err
	}
	table := render(results, 2*len(l.writes)+publishes+len(l.hooks), acked, publishes, publishAcked, conflicts, replayViolations, effectViolations)
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

// terminate sends SIGTERM to devstack's child running the named binary, as
// a rollout stops a pod; devstack starts it again.
func terminate(devstack int, name string) error {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		var pid, ppid int
		var comm, state string
		if _, err := fmt.Sscan(string(stat), &pid, &comm, &state, &ppid); err != nil || ppid != devstack {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if argv0, _, _ := strings.Cut(string(cmdline), "\x00"); filepath.Base(argv0) == name {
			return syscall.Kill(pid, syscall.SIGTERM)
		}
	}
	return fmt.Errorf("no %s process under devstack", name)
}

// waitReady waits until a restarted process answers /readyz (devstack
// starts it again when it stopped cleanly).
func waitReady(ctx context.Context, internal string) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if res, err := http.Get(internal + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		sleep(ctx, 50*time.Millisecond)
	}
	return fmt.Errorf("%s not ready 60 s after its restart", internal)
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

type fault struct {
	name    string
	inject  func() error
	recover func() error
}

// demoToken is the demo owner's access token with every scope the load uses.
func demoToken(ctx context.Context, bin, base string) (string, error) {
	out, err := exec.CommandContext(ctx, filepath.Join(bin, "partnerctl"), "token", "--base-url", base,
		"--email", seed.OwnerEmail, "--password", seed.DemoPassword, "--client-id", seed.DemoClientID,
		"--redirect-uri", seed.DemoRedirectURI, "--scope", scopes, "--json").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("partnerctl token: %w: %s", err, ee.Stderr)
		}
		return "", fmt.Errorf("partnerctl token: %w", err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(out, &tok); err != nil || tok.AccessToken == "" {
		return "", fmt.Errorf("partnerctl token: unexpected output")
	}
	return tok.AccessToken, nil
}

// sample is one request's outcome.
type sample struct {
	op      string
	start   time.Time
	took    time.Duration
	status  int // 0: no HTTP answer
	problem string
}

// write is one create-menu write and what its two concurrent sends answered.
type write struct {
	seq       int
	key, name string
	acked     bool
	menuID    string
	// The second write on the created menu: two catalog items added in
	// one change, also sent twice at once with one key.
	itemsKey   string
	itemsAcked bool
	// The third write: the menu, now holding its items, made the POS menu
	// (odd writes) or the online menu (even writes), with the expected
	// counts and current menu read just before; sent twice at once with one
	// key. A 409 is a legitimate outcome when another writer won.
	publish *publishWrite
}

// hookWrite is one create-webhook-endpoint write, its URL unique to it.
type hookWrite struct {
	key, url string
	acked    bool
	id       string
}

// webhookTwice creates one webhook endpoint, sent twice at once with one
// key.
func (l *load) webhookTwice(ctx context.Context) {
	l.mu.Lock()
	hw := &hookWrite{key: uuid.NewString(), url: fmt.Sprintf("https://example.com/faults/%s/%d", l.runID, len(l.hooks))}
	l.hooks = append(l.hooks, hw)
	l.mu.Unlock()
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.sendHook(ctx, hw)
		}()
	}
	wg.Wait()
}

func (l *load) sendHook(ctx context.Context, hw *hookWrite) int {
	code, raw := l.do(ctx, "create webhook endpoint", http.MethodPost, "/v1/restaurants/"+l.restaurant+"/webhook-endpoints",
		map[string]any{"url": hw.url, "eventTypes": []string{"order.created"}, "idempotencyKey": hw.key})
	if code == http.StatusCreated || code == http.StatusOK {
		var r struct {
			Data struct {
				Endpoint struct {
					ID string `json:"id"`
				} `json:"endpoint"`
			} `json:"data"`
		}
		_ = json.Unmarshal(raw, &r)
		l.mu.Lock()
		if hw.acked && hw.id != r.Data.Endpoint.ID {
			hw.id = "conflicting answers: " + hw.id + " and " + r.Data.Endpoint.ID
		} else {
			hw.acked, hw.id = true, r.Data.Endpoint.ID
		}
		l.mu.Unlock()
	}
	return code
}

// publishWrite is one set-POS-menu or set-online-menu write.
type publishWrite struct {
	key, path string
	body      map[string]any
	acked     bool
	conflicts int
	// previous is the menu it replaced, from its first acknowledgement;
	// answers disagreeing on it mean the write took effect twice.
	previous string
	problem  string
}

type load struct {
	base, token, restaurant, runID string
	client                         *http.Client
	// items are two catalog items of the restaurant, added to each
	// created menu.
	items []string

	mu      sync.Mutex
	samples []sample
	writes  []*write
	hooks   []*hookWrite
	seq     int
}

func (l *load) record(s sample) {
	l.mu.Lock()
	l.samples = append(l.samples, s)
	l.mu.Unlock()
}

// do sends one request and classifies its answer: a 5xx other than 503, a
// 503 without the error envelope, or no answer at all is a problem.
func (l *load) do(ctx context.Context, op, method, path string, body any) (int, []byte) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(ctx, method, l.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+l.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	res, err := l.client.Do(req)
	s := sample{op: op, start: start}
	if err != nil {
		s.took = time.Since(start)
		if ctx.Err() == nil {
			s.problem = "no answer: " + err.Error()
			l.record(s)
		}
		return 0, nil
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	s.took, s.status = time.Since(start), res.StatusCode
	switch {
	case res.StatusCode >= 500 && res.StatusCode != http.StatusServiceUnavailable:
		s.problem = fmt.Sprintf("%d: %.200s", res.StatusCode, raw)
	case res.StatusCode == http.StatusServiceUnavailable:
		var env struct {
			Error     string `json:"error"`
			RequestID string `json:"request_id"`
		}
		if json.Unmarshal(raw, &env) != nil || env.Error == "" || env.RequestID == "" {
			s.problem = fmt.Sprintf("503 without the error envelope: %.200s", raw)
		}
	}
	l.record(s)
	return res.StatusCode, raw
}

func (l *load) worker(ctx context.Context, w int) {
	today := time.Now().UTC().Format("2006-01-02")
	reads := []struct{ op, path string }{
		{"orders search", "/v1/restaurants/" + l.restaurant + "/orders?limit=20"},
		{"payment report", "/v1/restaurants/" + l.restaurant + "/payment-report?scope=day&start_date=" + today + "&end_date=" + today},
		{"menu list", "/v1/restaurants/" + l.restaurant + "/menus"},
	}
	for i := 0; ctx.Err() == nil; i++ {
		if i%4 == 3 {
			l.createMenuTwice(ctx)
			continue
		}
		r := reads[(i+w)%len(reads)]
		l.do(ctx, r.op, http.MethodGet, r.path, nil)
	}
}

// createMenuTwice sends one create-menu write twice at once with the same
// idempotency key, as a client retrying a slow request does.
func (l *load) createMenuTwice(ctx context.Context) {
	l.mu.Lock()
	l.seq++
	wr := &write{seq: l.seq, key: uuid.NewString(), name: fmt.Sprintf("Faults %s #%d", l.runID, l.seq), itemsKey: uuid.NewString()}
	l.writes = append(l.writes, wr)
	l.mu.Unlock()
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.sendCreate(ctx, wr)
		}()
	}
	wg.Wait()
	l.mu.Lock()
	menuID := wr.menuID
	l.mu.Unlock()
	if menuID == "" {
		return
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.sendAddItems(ctx, wr, menuID)
		}()
	}
	wg.Wait()
	l.mu.Lock()
	itemsAcked := wr.itemsAcked
	l.mu.Unlock()
	if itemsAcked {
		l.publishTwice(ctx, wr, menuID)
	}
}

// publishTwice makes the write's menu the POS menu or the online menu,
// alternately, after reading the counts and the current menu off the menu
// list, and sends the change twice at once with one key.
func (l *load) publishTwice(ctx context.Context, wr *write, menuID string) {
	code, raw := l.do(ctx, "menu list", http.MethodGet, "/v1/restaurants/"+l.restaurant+"/menus", nil)
	if code != http.StatusOK {
		return
	}
	var listed struct {
		Data struct {
			Menus []struct {
				MenuID        string `json:"menuId"`
				IsPosMenu     bool   `json:"isPosMenu"`
				IsOnlineMenu  bool   `json:"isOnlineMenu"`
				CategoryCount int    `json:"categoryCount"`
				ItemCount     int    `json:"itemCount"`
			} `json:"menus"`
		} `json:"data"`
	}
	if json.Unmarshal(raw, &listed) != nil {
		return
	}
	online := wr.seq%2 == 0
	pw := &publishWrite{key: uuid.NewString(), path: "/v1/restaurants/" + l.restaurant + "/menus/pos",
		body: map[string]any{"menuId": menuID}}
	currentField := "expectedCurrentPosMenuId"
	if online {
		pw.path, currentField = "/v1/restaurants/"+l.restaurant+"/menus/online", "expectedCurrentOnlineMenuId"
	}
	var current any
	found := false
	for _, m := range listed.Data.Menus {
		if (online && m.IsOnlineMenu) || (!online && m.IsPosMenu) {
			current = m.MenuID
		}
		if m.MenuID == menuID {
			found = true
			pw.body["expectedCategoryCount"], pw.body["expectedItemCount"] = m.CategoryCount, m.ItemCount
		}
	}
	if !found {
		return
	}
	pw.body[currentField], pw.body["idempotencyKey"], pw.body["confirmed"] = current, pw.key, true
	l.mu.Lock()
	wr.publish = pw
	l.mu.Unlock()
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.sendPublish(ctx, pw)
		}()
	}
	wg.Wait()
}

// sendPublish sends the publish write and keeps the menu it replaced.
func (l *load) sendPublish(ctx context.Context, pw *publishWrite) int {
	op := "set POS menu"
	if strings.HasSuffix(pw.path, "/online") {
		op = "set online menu"
	}
	code, raw := l.do(ctx, op, http.MethodPut, pw.path, pw.body)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch code {
	case http.StatusOK:
		var r struct {
			Data struct {
				PreviousPosMenuID    *string `json:"previousPosMenuId"`
				PreviousOnlineMenuID *string `json:"previousOnlineMenuId"`
			} `json:"data"`
		}
		_ = json.Unmarshal(raw, &r)
		prev := "null"
		for _, p := range []*string{r.Data.PreviousPosMenuID, r.Data.PreviousOnlineMenuID} {
			if p != nil {
				prev = *p
			}
		}
		if pw.acked && pw.previous != prev {
			pw.problem = fmt.Sprintf("%s %s: conflicting answers: replaced %s and %s", op, pw.body["menuId"], pw.previous, prev)
		}
		if !pw.acked {
			pw.acked, pw.previous = true, prev
		}
	case http.StatusConflict:
		pw.conflicts++
	}
	return code
}

// catalogItems reads two catalog items off a menu.
func (l *load) catalogItems(ctx context.Context, menuID string) ([]string, error) {
	code, raw := l.do(ctx, "menu items", http.MethodGet, "/v1/restaurants/"+l.restaurant+"/menus/"+menuID+"/items?limit=2", nil)
	var page struct {
		Data struct {
			Items []struct {
				CatalogItemID string `json:"catalogItemId"`
			} `json:"items"`
		} `json:"data"`
	}
	if code != http.StatusOK || json.Unmarshal(raw, &page) != nil || len(page.Data.Items) != 2 {
		return nil, fmt.Errorf("menu items of %s: %d %.300s", menuID, code, raw)
	}
	return []string{page.Data.Items[0].CatalogItemID, page.Data.Items[1].CatalogItemID}, nil
}

// sendAddItems adds the two catalog items to the write's menu, which must
// then hold none.
func (l *load) sendAddItems(ctx context.Context, wr *write, menuID string) int {
	code, _ := l.do(ctx, "add menu items", http.MethodPost, "/v1/restaurants/"+l.restaurant+"/menus/"+menuID+"/items",
		map[string]any{"catalogItemIds": l.items, "expectedCategoryCount": 0, "expectedItemCount": 0, "idempotencyKey": wr.itemsKey, "confirmed": true})
	if code == http.StatusOK || code == http.StatusCreated {
		l.mu.Lock()
		wr.itemsAcked = true
		l.mu.Unlock()
	}
	return code
}

func (l *load) sendCreate(ctx context.Context, wr *write) int {
	code, raw := l.do(ctx, "create menu", http.MethodPost, "/v1/restaurants/"+l.restaurant+"/menus",
		map[string]any{"name": wr.name, "idempotencyKey": wr.key})
	if code == http.StatusCreated || code == http.StatusOK {
		var r struct {
			Data struct {
				Menu struct {
					MenuID string `json:"menuId"`
				} `json:"menu"`
			} `json:"data"`
		}
		_ = json.Unmarshal(raw, &r)
		l.mu.Lock()
		if wr.acked && wr.menuID != r.Data.Menu.MenuID {
			wr.menuID = "conflicting answers: " + wr.menuID + " and " + r.Data.Menu.MenuID
		} else {
			wr.acked, wr.menuID = true, r.Data.Menu.MenuID
		}
		l.mu.Unlock()
	}
	return code
}

// replay sends every write once more with its key, the faults over: each
// must now succeed, with the menu of its first acknowledgement.
func (l *load) replay(ctx context.Context) []string {
	var problems []string
	for _, wr := range l.writes {
		before := wr.menuID
		var code int
		for attempt := 0; attempt < 3; attempt++ {
			if code = l.sendCreate(ctx, wr); code != http.StatusConflict {
				break
			}
			sleep(ctx, 200*time.Millisecond)
		}
		switch {
		case code != http.StatusCreated && code != http.StatusOK:
			problems = append(problems, fmt.Sprintf("replay of %q answered %d", wr.name, code))
		case before != "" && wr.menuID != before:
			problems = append(problems, fmt.Sprintf("replay of %q: %s", wr.name, wr.menuID))
		default:
			for attempt := 0; attempt < 3; attempt++ {
				if code = l.sendAddItems(ctx, wr, wr.menuID); code != http.StatusConflict {
					break
				}
				sleep(ctx, 200*time.Millisecond)
			}
			if code != http.StatusOK && code != http.StatusCreated {
				problems = append(problems, fmt.Sprintf("replay of the items added to %q answered %d", wr.name, code))
			}
			if pw := wr.publish; pw != nil {
				wasAcked, before := pw.acked, pw.previous
				code = l.sendPublish(ctx, pw)
				switch {
				case wasAcked && code != http.StatusOK:
					problems = append(problems, fmt.Sprintf("replay of publishing %q (acknowledged) answered %d", wr.name, code))
				case code != http.StatusOK && code != http.StatusConflict:
					problems = append(problems, fmt.Sprintf("replay of publishing %q answered %d", wr.name, code))
				case wasAcked && pw.previous != before:
					problems = append(problems, fmt.Sprintf("replay of publishing %q replaced %s, first answer %s", wr.name, pw.previous, before))
				}
				if pw.problem != "" {
					problems = append(problems, pw.problem)
				}
			}
		}
	}
	for _, hw := range l.hooks {
		before := hw.id
		var code int
		for attempt := 0; attempt < 3; attempt++ {
			if code = l.sendHook(ctx, hw); code != http.StatusConflict {
				break
			}
			sleep(ctx, 200*time.Millisecond)
		}
		switch {
		case code != http.StatusCreated && code != http.StatusOK:
			problems = append(problems, fmt.Sprintf("replay of webhook endpoint %s answered %d", hw.url, code))
		case before != "" && hw.id != before:
			problems = append(problems, fmt.Sprintf("replay of webhook endpoint %s: %s", hw.url, hw.id))
		}
	}
	return problems
}

// checkEffects counts each write's menus through the API and in the
// database: exactly one each (every write was replayed to success).
func (l *load) checkEffects(ctx context.Context, pgURL string) ([]string, error) {
	code, raw := l.do(ctx, "menu list", http.MethodGet, "/v1/restaurants/"+l.restaurant+"/menus", nil)
	if code != http.StatusOK {
		return nil, fmt.Errorf("menu list after the faults answered %d: %.300s", code, raw)
	}
	var listed struct {
		Data struct {
			Menus []struct {
				MenuID    string `json:"menuId"`
				Name      string `json:"name"`
				ItemCount int    `json:"itemCount"`
			} `json:"menus"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &listed); err != nil {
		return nil, err
	}
	api, apiItems := map[string]int{}, map[string]int{}
	for _, m := range listed.Data.Menus {
		api[m.Name]++
		apiItems[m.MenuID] = m.ItemCount
	}
	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT name, count(*) FROM menus.menus WHERE name LIKE $1 GROUP BY name`, "Faults "+l.runID+" #%")
	if err != nil {
		return nil, err
	}
	db := map[string]int{}
	for rows.Next() {
		var name string
		var n int
		if err := rows.Scan(&name, &n); err != nil {
			return nil, err
		}
		db[name] = n
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	items := map[string]int{}
	rows, err = conn.Query(ctx, `SELECT m.id::text, count(i.item_id) FROM menus.menus m LEFT JOIN menus.menu_items i ON i.menu_id = m.id
		WHERE m.name LIKE $1 GROUP BY m.id`, "Faults "+l.runID+" #%")
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		items[id] = n
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var problems []string
	for _, wr := range l.writes {
		// Both items or neither: never one; and after the replay, both.
		if items[wr.menuID] != len(l.items) || apiItems[wr.menuID] != len(l.items) {
			problems = append(problems, fmt.Sprintf("menu %q (items added: acknowledged %v): %d items in the database, %d through the API, want %d",
				wr.name, wr.itemsAcked, items[wr.menuID], apiItems[wr.menuID], len(l.items)))
		}
		if api[wr.name] != 1 || db[wr.name] != 1 {
			problems = append(problems, fmt.Sprintf("write %q (acknowledged %v): %d menus through the API, %d in the database", wr.name, wr.acked, api[wr.name], db[wr.name]))
		}
	}
	// Publishing: each acknowledged key has one stored outcome, and no two
	// acknowledged writes replaced the same menu (each suite menu is
	// published by one key only, so a menu replaced twice means a write
	// took effect twice).
	var keys []string
	replaced := map[string]string{}
	for _, wr := range l.writes {
		pw := wr.publish
		if pw == nil || !pw.acked {
			continue
		}
		keys = append(keys, pw.key)
		r := pw.path + " " + pw.previous
		if other, ok := replaced[r]; ok {
			problems = append(problems, fmt.Sprintf("publishing %q and %q both replaced %s", other, wr.name, r))
		}
		replaced[r] = wr.name
	}
	stored := map[string]int{}
	rows, err = conn.Query(ctx, `SELECT key, count(*) FROM menus.idempotency_keys WHERE key = ANY($1) AND status = 200 GROUP BY key`, keys)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var key string
		var n int
		if err := rows.Scan(&key, &n); err != nil {
			return nil, err
		}
		stored[key] = n
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, k := range keys {
		if stored[k] != 1 {
			problems = append(problems, fmt.Sprintf("publish key %s: %d stored successful outcomes, want 1", k, stored[k]))
		}
	}
	// Webhook endpoints: exactly one per key, through the API and in the
	// database.
	code, raw = l.do(ctx, "webhook endpoint list", http.MethodGet, "/v1/restaurants/"+l.restaurant+"/webhook-endpoints", nil)
	if code != http.StatusOK {
		return nil, fmt.Errorf("webhook endpoint list after the faults answered %d: %.300s", code, raw)
	}
	var eps struct {
		Data []struct {
			URL string `json:"url"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &eps); err != nil {
		return nil, err
	}
	apiHooks, dbHooks := map[string]int{}, map[string]int{}
	for _, e := range eps.Data {
		apiHooks[e.URL]++
	}
	rows, err = conn.Query(ctx, `SELECT url, count(*) FROM events.webhook_endpoints WHERE url LIKE $1 GROUP BY url`,
		"https://example.com/faults/"+l.runID+"/%")
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var u string
		var n int
		if err := rows.Scan(&u, &n); err != nil {
			return nil, err
		}
		dbHooks[u] = n
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, hw := range l.hooks {
		if apiHooks[hw.url] != 1 || dbHooks[hw.url] != 1 {
			problems = append(problems, fmt.Sprintf("webhook endpoint %s (acknowledged %v): %d through the API, %d in the database",
				hw.url, hw.acked, apiHooks[hw.url], dbHooks[hw.url]))
		}
	}
	if len(dbHooks) != len(l.hooks) {
		problems = append(problems, fmt.Sprintf("%d suite webhook endpoints in the database for %d writes", len(dbHooks), len(l.hooks)))
	}
	if len(db) != len(l.writes) {
		problems = append(problems, fmt.Sprintf("%d suite menus in the database for %d writes", len(db), len(l.writes)))
	}
	return problems, nil
}

// result is one fault's line of the table.
type result struct {
	fault              string
	requests           int
	statuses           map[int]int
	noAnswer           int
	p99During, p99Back time.Duration
	violations         int
	problems           []string
}

// summarize takes the samples of requests started between start and end:
// during the fault (start..recovered) and after it. p99Back is over the
// requests started from 2 s after the recovery: latency must be back to
// normal by then.
func (l *load) summarize(name string, start, recovered, end time.Time, after time.Duration) result {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := result{fault: name, statuses: map[int]int{}}
	var during, back []time.Duration
	settled := recovered.Add(2 * time.Second)
	for _, s := range l.samples {
		if s.start.Before(start) || !s.start.Before(end) {
			continue
		}
		r.requests++
		if s.status == 0 {
			r.noAnswer++
		} else {
			r.statuses[s.status]++
		}
		if s.problem != "" {
			r.violations++
			if len(r.problems) < 5 {
				r.problems = append(r.problems, s.op+": "+s.problem)
			}
		}
		switch {
		case s.start.Before(recovered):
			during = append(during, s.took)
		case !s.start.Before(settled):
			back = append(back, s.took)
			if s.status != http.StatusOK && s.status != http.StatusCreated && s.status != http.StatusConflict {
				r.violations++
				if len(r.problems) < 5 {
					r.problems = append(r.problems, fmt.Sprintf("%s answered %d 2 s after the recovery", s.op, s.status))
				}
			}
		}
	}
	r.p99During, r.p99Back = p99(during), p99(back)
	if os.Getenv("FAULTS_DEBUG") != "" {
		for _, s := range l.samples {
			if !s.start.Before(start) && s.start.Before(recovered) && s.took > time.Second {
				logf("slow during %s: %s %d %v at +%v", name, s.op, s.status, s.took, s.start.Sub(start).Round(time.Millisecond))
			}
		}
	}
	// Back to normal: the p99 from 2 s after the recovery stays within the
	// gateway's own budget for a partner request.
	if r.p99Back > 500*time.Millisecond {
		r.violations++
		r.problems = append(r.problems, fmt.Sprintf("p99 %v from 2 s after the recovery", r.p99Back))
	}
	return r
}

func p99(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[(len(ds)*99+99)/100-1]
}

func render(results []result, writes, acked, publishes, publishAcked, conflicts int, replay, effects []string) string {
	var b strings.Builder
	b.WriteString("| fault | requests | outcomes by status | p99 during | p99 after (from 2 s) | violations |\n|---|---|---|---|---|---|\n")
	for _, r := range results {
		var codes []int
		for c := range r.statuses {
			codes = append(codes, c)
		}
		slices.Sort(codes)
		var parts []string
		for _, c := range codes {
			parts = append(parts, fmt.Sprintf("%d×%d", c, r.statuses[c]))
		}
		if r.noAnswer > 0 {
			parts = append(parts, fmt.Sprintf("no answer×%d", r.noAnswer))
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %d |\n", r.fault, r.requests, strings.Join(parts, " "),
			r.p99During.Round(time.Millisecond), r.p99Back.Round(time.Millisecond), r.violations)
	}
	fmt.Fprintf(&b, "\nWrites (create a menu, add two items to it, then make it the POS or the online menu, alternately; "+
		"and one webhook endpoint created during each fault and one after its recovery; each sent twice at once with one idempotency key): %d, %d acknowledged during the faults; of them %d set-POS/online "+
		"writes, %d acknowledged, %d answers 409 (another writer won: an outcome, not a violation); replayed after them: %d violations; "+
		"effects (one menu per key, its two items added together, each publish key stored once and no menu replaced twice, "+
		"one webhook endpoint per key, through the API and in the database): %d violations.\n",
		writes, acked, publishes, publishAcked, conflicts, len(replay), len(effects))
	var all []string
	for _, r := range results {
		for _, p := range r.problems {
			all = append(all, r.fault+": "+p)
		}
	}
	all = append(append(all, replay...), effects...)
	if len(all) > 0 {
		b.WriteString("\nViolations:\n")
		for i, p := range all {
			if i == 20 {
				fmt.Fprintf(&b, "- … and %d more\n", len(all)-20)
				break
			}
			fmt.Fprintf(&b, "- %s\n", p)
		}
	}
	return b.String()
}

// writeTable replaces the part of a Markdown file between the suite's
// markers with the table.
func writeTable(path, table string) error {
	const begin, end = "<!-- faults:begin -->\n", "<!-- faults:end -->"
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(raw)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %q … %q markers", path, strings.TrimSpace(begin), end)
	}
	s = s[:i+len(begin)] + table + s[j:]
	return os.WriteFile(path, []byte(s), 0o644)
}

// withoutEnv is the environment minus the named variables.
func withoutEnv(names ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, k) {
			out = append(out, kv)
		}
	}
	return out
}
