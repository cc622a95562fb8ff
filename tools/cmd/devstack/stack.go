package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"

	"partnerapi.dev/pkg/localinfra"
	"partnerapi.dev/tools/registry"
	"partnerapi.dev/tools/seed"
	"partnerapi.dev/tools/system"
)

// env is the environment devstack gives process p (and its migrate run):
// its listeners, the infrastructure and secrets it declares in the registry,
// the URL of each process it calls, and for the gateway every upstream's URL.
func (s *stack) env(p registry.Process) []string {
	env := []string{fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", s.port(p.Name)), fmt.Sprintf("INTERNAL_HTTP_ADDR=127.0.0.1:%d", s.internalPort(p.Name))}
	if p.Database {
		env = append(env, "DATABASE_URL="+s.databaseURL)
	}
	if p.Redis {
		env = append(env, "REDIS_URL="+s.redisURL)
	}
	if p.PublicBaseURL {
		env = append(env, "PUBLIC_BASE_URL="+s.baseURL)
	}
	for _, name := range p.Secrets {
		env = append(env, name+"="+s.secrets[name])
	}
	for _, c := range s.reg.Callees(p) {
		env = append(env, c.Upstream.URLEnv+"="+s.upstreamURL(c.Name))
	}
	if p.Name == "events" {
		// Local runs only: webhook endpoints may be http://127.0.0.1, so
		// bin/webhookreceiver can receive the demo restaurant's events.
		env = append(env, "WEBHOOKS_ALLOW_LOOPBACK=true")
	}
	if p.Gateway {
		for _, u := range s.reg.Upstreams() {
			env = append(env, u.Upstream.URLEnv+"="+s.upstreamURL(u.Name))
		}
	}
	return env
}

type stack struct {
	reg               registry.Registry
	dir, bin, baseURL string
	portOffset        int
	// redirectURI is the demo partner's redirect URI, its port moved by
	// portOffset like every other.
	redirectURI         string
	upstreams           map[string]string // --upstream: name to URL
	databaseURL         string
	redisURL            string
	secrets             map[string]string
	seedValue           uint64
	infra               []*localinfra.Server
	children            []*child
	browser             *browserFlow
	externalDB, externR bool
}

func runStack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	dir := fs.String("data", ".run", "folder for local data and generated secrets")
	bin := fs.String("bin", "bin", "folder with the built binaries")
	seedValue := fs.Uint64("seed", 42, "demo data seed")
	reg := registry.System()
	var ports []string
	for _, p := range reg.Processes {
		ports = append(ports, fmt.Sprintf("%s %d and %d", p.Name, p.Port, p.InternalPort))
	}
	defaultOffset, _ := strconv.Atoi(os.Getenv("PORT_OFFSET"))
	portOffset := fs.Int("port-offset", defaultOffset, "added to every process's ports ("+strings.Join(ports, ", ")+") and the demo redirect URI's; default $PORT_OFFSET")
	upstreams := map[string]string{}
	fs.Func("upstream", "name=URL: the other processes reach the named one at URL (a load balancer in front of its replicas) instead of its own port; repeatable", func(v string) error {
		name, u, ok := strings.Cut(v, "=")
		if _, known := reg.Get(name); !ok || !known || u == "" {
			return fmt.Errorf("want name=URL with a process of the registry, got %q", v)
		}
		upstreams[name] = u
		return nil
	})
	tracing := fs.Bool("tracing", false, "also run Jaeger (built once from the Go module proxy) and export every process's traces to it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tracing {
		stop, err := startTracing(ctx, *dir)
		if err != nil {
			return err
		}
		defer stop()
	}
	s := &stack{reg: reg, dir: *dir, bin: *bin, portOffset: *portOffset, seedValue: *seedValue, upstreams: upstreams}
	s.baseURL = s.url(reg.Gateway().Name)
	s.redirectURI = seed.RedirectURI(s.portOffset)
	defer s.stop()
	started := time.Now()
	if err := s.start(ctx); err != nil {
		return err
	}
	logf("ready in %s", time.Since(started).Round(100*time.Millisecond))
	for {
		select {
		case <-ctx.Done():
			logf("stopping")
			return nil
		case c := <-s.anyExit():
			// A process that stopped cleanly (SIGTERM, as a rollout
			// stops it) is started again, as Kubernetes would; a crash
			// stops the stack.
			if c.cmd.ProcessState == nil || !c.cmd.ProcessState.Success() {
				return fmt.Errorf("%s exited unexpectedly; its log is above", c.name)
			}
			if err := s.restart(ctx, c); err != nil {
				return err
			}
		}
	}
}

// restart starts a stopped child again in its place.
func (s *stack) restart(ctx context.Context, old *child) error {
	logf("%s stopped; starting it again", old.name)
	p, ok := s.reg.Get(old.name)
	if !ok {
		return fmt.Errorf("%s is not in the registry", old.name)
	}
	c, err := startChild(p.Name, filepath.Join(s.bin, p.Name), s.env(p))
	if err != nil {
		return err
	}
	for i := range s.children {
		if s.children[i] == old {
			s.children[i] = c
		}
	}
	return waitReady(ctx, c, s.port(p.Name))
}

func (s *stack) start(ctx context.Context) error {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return err
	}
	var err error
	if s.secrets, err = loadSecrets(filepath.Join(s.dir, system.SecretsFile), s.reg.Secrets); err != nil {
		return err
	}
	if err := s.startInfra(ctx); err != nil {
		return err
	}
	for _, p := range s.reg.Processes {
		if !p.Database {
			continue
		}
		logf("migrating %s", p.Name)
		cmd := exec.CommandContext(ctx, filepath.Join(s.bin, p.Name), "migrate")
		cmd.Env = append(os.Environ(), s.env(p)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("migrate %s: %w\n%s", p.Name, err, out)
		}
	}
	for _, p := range s.reg.Processes {
		if p.Kubernetes {
			logf("not starting %s: it needs a Kubernetes API", p.Name)
			continue
		}
		c, err := startChild(p.Name, filepath.Join(s.bin, p.Name), s.env(p))
		if err != nil {
			return err
		}
		s.children = append(s.children, c)
		if err := waitReady(ctx, c, s.port(p.Name)); err != nil {
			return err
		}
	}
	if err := s.seedOnce(ctx); err != nil {
		return err
	}
	if err := s.allowRedirect(ctx); err != nil {
		return err
	}
	return s.printWelcome(ctx)
}

func (s *stack) startInfra(ctx context.Context) error {
	s.databaseURL = os.Getenv("DATABASE_URL")
	if s.databaseURL == "" {
		abs, _ := filepath.Abs(filepath.Join(s.dir, "postgres"))
		logf("starting local postgres (data in %s)", abs)
		pg, err := localinfra.StartPostgres(ctx, localinfra.PostgresOptions{Dir: abs, Durable: true})
		if err != nil {
			return err
		}
		s.infra = append(s.infra, pg)
		if err := ensureDatabase(ctx, pg.URL, "partnerapi"); err != nil {
			return err
		}
		u, _ := url.Parse(pg.URL)
		u.Path = "/partnerapi"
		s.databaseURL = u.String()
	} else {
		s.externalDB = true
		logf("using DATABASE_URL")
	}
	s.redisURL = os.Getenv("REDIS_URL")
	if s.redisURL == "" {
		abs, _ := filepath.Abs(filepath.Join(s.dir, "redis"))
		logf("starting local redis (data in %s)", abs)
		rd, err := localinfra.StartRedis(ctx, localinfra.RedisOptions{Dir: abs, Durable: true})
		if err != nil {
			return err
		}
		s.infra = append(s.infra, rd)
		s.redisURL = rd.URL
	} else {
		s.externR = true
		logf("using REDIS_URL")
	}
	return nil
}

func ensureDatabase(ctx context.Context, adminURL, name string) error {
	db, err := sql.Open("pgx", adminURL)
	if err != nil {
		return err
	}
	defer db.Close()
	var exists bool
	if err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		_, err = db.ExecContext(ctx, `CREATE DATABASE `+name)
	}
	return err
}

// seedOnce loads the demo data set the first time this database is used.
func (s *stack) seedOnce(ctx context.Context) error {
	where := "local"
	if s.externalDB {
		where = redactPassword(s.databaseURL)
	}
	// The data set's parts are in the key: a stack seeded before a part
	// existed is seeded again (every load is idempotent).
	sum := sha256.Sum256(fmt.Appendf(nil, "%s|%d|directory,orders,accounting,menus", where, s.seedValue))
	marker := filepath.Join(s.dir, "seeded-"+hex.EncodeToString(sum[:6]))
	if _, err := os.Stat(marker); err == nil {
		logf("demo data already loaded")
		return nil
	}
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, "seed"),
		"--seed", fmt.Sprint(s.seedValue), "--identity-url", s.internalURL("identity"), "--orders-url", s.url("orders"),
		"--accounting-url", s.url("accounting"), "--menus-url", s.url("menus"))
	cmd.Env = append(os.Environ(), "ADMIN_TOKEN="+s.secrets["ADMIN_TOKEN"], "INGEST_TOKEN="+s.secrets["INGEST_TOKEN"])
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("seed demo data: %w", err)
	}
	return os.WriteFile(marker, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644)
}

// allowRedirect registers the demo redirect URI of this port offset with
// the demo partner client, beside those it has, so the printed authorize
// URL and partnerctl token work at any offset (idempotent).
func (s *stack) allowRedirect(ctx context.Context) error {
	if s.redirectURI == seed.DemoRedirectURI {
		return nil
	}
	path := s.internalURL("identity") + "/admin/v1/clients/" + seed.DemoClientID
	var client struct {
		Data struct {
			RedirectURIs []string `json:"redirectUris"`
		} `json:"data"`
	}
	if err := s.admin(ctx, http.MethodGet, path, nil, &client); err != nil {
		return err
	}
	if slices.Contains(client.Data.RedirectURIs, s.redirectURI) {
		return nil
	}
	uris := append(client.Data.RedirectURIs, s.redirectURI)
	return s.admin(ctx, http.MethodPatch, path, map[string]any{"redirectUris": uris}, nil)
}

// admin calls identity's admin API with the stack's ADMIN_TOKEN.
func (s *stack) admin(ctx context.Context, method, url string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+s.secrets["ADMIN_TOKEN"])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, raw)
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// url is the local base URL of a process.
func (s *stack) url(name string) string { return fmt.Sprintf("http://127.0.0.1:%d", s.port(name)) }

// upstreamURL is where the other processes reach the named one: its own
// port, or the load balancer --upstream names for it.
func (s *stack) upstreamURL(name string) string {
	if u, ok := s.upstreams[name]; ok {
		return u
	}
	return s.url(name)
}

func (s *stack) port(name string) int {
	p, _ := s.reg.Get(name)
	return p.Port + s.portOffset
}

// internalURL is the local base URL of a process's internal listener.
func (s *stack) internalURL(name string) string {
	return fmt.Sprintf("http://127.0.0.1:%d", s.internalPort(name))
}

func (s *stack) internalPort(name string) int {
	p, _ := s.reg.Get(name)
	return p.InternalPort + s.portOffset
}

func (s *stack) anyExit() <-chan *child {
	ch := make(chan *child, len(s.children))
	for _, c := range s.children {
		go func() { <-c.done; ch <- c }()
	}
	return ch
}

// stop ends the processes in reverse start order, then Redis and Postgres.
func (s *stack) stop() {
	if s.browser != nil {
		s.browser.Stop()
	}
	for i := len(s.children) - 1; i >= 0; i-- {
		s.children[i].stop()
	}
	for i := len(s.infra) - 1; i >= 0; i-- {
		_ = s.infra[i].Stop()
	}
}

type child struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

func startChild(name, path string, env []string) (*child, error) {
	cmd := exec.Command(path)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	r, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (run make build first): %w", name, err)
	}
	go prefixLines(name, r)
	c := &child{name: name, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); w.Close(); close(c.done) }()
	return c, nil
}

func (c *child) stop() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(25 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

func prefixLines(name string, r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fmt.Fprintf(os.Stderr, "%-9s| %s\n", name, sc.Text())
	}
}

func waitReady(ctx context.Context, c *child, port int) error {
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", port)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-c.done:
			return fmt.Errorf("%s exited during start; its log is above", c.name)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := http.Get(url) //nolint:gosec // a local process of our own
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				logf("%s ready on :%d", c.name, port)
				return nil
			}
		}
	}
	return fmt.Errorf("%s not ready after 60s", c.name)
}

// loadSecrets reads the generated local secrets, creating any missing one of
// the registry's secrets in its form.
func loadSecrets(path string, forms map[string]registry.SecretForm) (map[string]string, error) {
	secrets, err := system.ReadSecrets(path)
	if err != nil { // none yet (or unreadable): all are generated anew
		secrets = map[string]string{}
	}
	random := func(n int) string {
		b := make([]byte, n)
		_, _ = rand.Read(b)
		return base64.StdEncoding.EncodeToString(b)
	}
	token := func() string { return strings.TrimRight(base64.URLEncoding.EncodeToString([]byte(random(24))), "=") }
	want := map[string]func() string{}
	for name, form := range forms {
		switch form {
		case registry.Keyring:
			want[name] = func() string { return "local1:" + random(32) }
		case registry.Token:
			want[name] = token
		case registry.Key:
			want[name] = func() string { return random(32) }
		}
	}
	changed := false
	for k, gen := range want {
		if secrets[k] == "" {
			secrets[k] = gen()
			changed = true
		}
	}
	if changed {
		keys := make([]string, 0, len(secrets))
		for k := range secrets {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, "%s=%s\n", k, secrets[k])
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
			return nil, err
		}
	}
	return secrets, nil
}

func redactPassword(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Redacted()
}
