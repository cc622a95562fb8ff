package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/tools/loadgen"
	"partnerapi.dev/tools/system"
)

// Targets of the gateway load test.
const (
	p50OverheadTarget = 300 * time.Microsecond // gateway p50 over the direct call, at equal load
	throughputTarget  = 0.8                    // gateway max throughput / nginx's
)

type gatewayFlags struct {
	bin          string
	duration     time.Duration
	warmup       time.Duration
	rate         int
	connections  int
	rounds       int
	installNginx bool
	keep         bool
}

// target is one way to reach GET /v1/restaurants.
type target struct {
	name   string
	url    string
	header func() http.Header // called before each run (internal contexts live 2 minutes)
	before func() error       // called before each run
	max    loadgen.Run
	fixed  loadgen.Run
	loads  []string // load average after each of its slices
}

func runGateway(ctx context.Context, args []string) error {
	var f gatewayFlags
	fs := flag.NewFlagSet("gateway", flag.ContinueOnError)
	fs.StringVar(&f.bin, "bin", "bin", "folder with the built binaries (make build)")
	fs.DurationVar(&f.duration, "duration", 10*time.Second, "measured time per target and kind of run (max, fixed rate), split over the rounds")
	fs.IntVar(&f.rounds, "rounds", 5, "rounds the measured time is split into, the targets interleaved")
	fs.DurationVar(&f.warmup, "warmup", 2*time.Second, "unmeasured run at full speed per target before measuring")
	fs.IntVar(&f.rate, "rate", 500, "requests per second of the fixed-rate (latency) run")
	fs.IntVar(&f.connections, "connections", 32, "workers = keep-alive connections of the max-throughput run")
	fs.BoolVar(&f.installNginx, "install-nginx", true, "when nginx is missing, apt-get install -y nginx (as root)")
	fs.BoolVar(&f.keep, "keep", false, "keep the temporary folder (stack data, nginx config and logs)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if f.rounds < 1 || f.duration/time.Duration(f.rounds) < 500*time.Millisecond {
		return errors.New("--rounds must be at least 1, with --duration / --rounds at least 500ms")
	}
	nginxBin, err := loadgen.NginxBinary(ctx, f.installNginx)
	if err != nil {
		return err
	}
	bin, err := filepath.Abs(f.bin)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "loadgen-gateway-")
	if err != nil {
		return err
	}
	if f.keep {
		logf("keeping %s", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}

	loadBefore := loadgen.Load()
	logf("starting the stack (bin/devstack, data in %s); load %s", tmp, loadBefore)
	started := time.Now()
	stack, err := system.Start(ctx, system.Options{
		Bin: bin, Dir: filepath.Join(tmp, "stack"),
		Env: append(withoutEnv("DATABASE_URL", "REDIS_URL"), "RATE_LIMIT_PER_MINUTE=100000000"),
	})
	if err != nil {
		return err
	}
	defer stack.Stop()
	logf("stack ready in %s: gateway %s, identity %s", time.Since(started).Round(100*time.Millisecond), stack.Gateway, stack.Identity)

	claims, err := system.TokenClaims(stack.Token)
	if err != nil {
		return err
	}
	keys, err := internalctx.ParseKeys(stack.Secrets["INTERNAL_CONTEXT_KEYS"])
	if err != nil {
		return fmt.Errorf("INTERNAL_CONTEXT_KEYS of the stack: %w", err)
	}
	// What the gateway forwards for this token: same client, user and grant.
	sign := func() string {
		return keys.Sign(internalctx.Context{ClientID: claims.ClientID, UserID: claims.Subject, GrantID: claims.GrantID,
			Scopes: strings.Fields(claims.Scope), RequestID: "loadgen"})
	}
	const path = "/v1/restaurants"
	targets := []*target{
		{name: "gateway", url: stack.Gateway + path, header: func() http.Header {
			return http.Header{"Authorization": {"Bearer " + stack.Token}}
		}},
		{name: "identity direct", url: stack.Identity + path, header: func() http.Header {
			return http.Header{internalctx.Header: {sign()}}
		}},
		{name: "nginx → identity", header: func() http.Header { return http.Header{} }},
	}

	// One answer each, checked by hand: same body everywhere.
	gw, err := fetch(ctx, targets[0].url, targets[0].header())
	if err != nil {
		return err
	}
	direct, err := fetch(ctx, targets[1].url, targets[1].header())
	if err != nil {
		return err
	}
	if gw != direct {
		return fmt.Errorf("gateway and identity answer differently:\n%s\n%s", gw, direct)
	}
	logf("GET %s answers 200 (%d bytes) through the gateway and directly", path, len(gw))

	// nginx gets the signed context in its configuration; a reload renews it
	// before it could expire (contexts live 2 minutes).
	nginx, err := loadgen.StartNginx(ctx, nginxBin, filepath.Join(tmp, "nginx"), strings.TrimPrefix(stack.Identity, "http://"),
		map[string]string{internalctx.Header: sign()})
	if err != nil {
		return err
	}
	defer nginx.Stop()
	signedAt := time.Now()
	ngx := targets[2]
	ngx.url = nginx.URL + path
	ngx.before = func() error {
		if time.Since(signedAt) < time.Minute {
			return nil
		}
		signedAt = time.Now()
		return nginx.SetHeaders(map[string]string{internalctx.Header: sign()})
	}
	body, err := fetch(ctx, ngx.url, nil)
	if err != nil {
		return err
	}
	if body != direct {
		return fmt.Errorf("nginx answers differently:\n%s", body)
	}
	logf("nginx on %s proxies to identity and answers the same", nginx.URL)

	if err := measure(ctx, f, targets); err != nil {
		return err
	}
	report(os.Stdout, f, targets, loadBefore)
	return nil
}

// measure warms every target up, then measures in rounds, fixed rate first:
// in each round every target (in a rotating order) gets one slice of the run.
// Interleaving spreads the other work on the shared machine over all targets
// instead of charging it to one.
func measure(ctx context.Context, f gatewayFlags, targets []*target) error {
	attack := func(t *target, rate int, d time.Duration) (loadgen.Run, error) {
		if err := ctx.Err(); err != nil {
			return loadgen.Run{}, err
		}
		if t.before != nil {
			if err := t.before(); err != nil {
				return loadgen.Run{}, err
			}
		}
		r := loadgen.Attack{Target: loadgen.Get(t.url, t.header()), Rate: rate, Duration: d, Connections: f.connections}.Do()
		if msg := r.Failures(); msg != "" {
			return r, fmt.Errorf("%s: %s", t.name, msg)
		}
		return r, nil
	}
	for _, t := range targets {
		logf("%s: warm-up %s (load %s)", t.name, f.warmup, loadgen.Load())
		if _, err := attack(t, 0, f.warmup); err != nil {
			return err
		}
	}
	// Latency at the fixed rate first, so no slice of it follows a saturating
	// one; then the max-throughput rounds.
	slice := f.duration / time.Duration(f.rounds)
	for _, kind := range []string{"fixed rate", "max throughput"} {
		for round := range f.rounds {
			for i := range targets {
				t := targets[(round+i)%len(targets)]
				time.Sleep(300 * time.Millisecond) // let the queues drain
				if kind == "fixed rate" {
					r, err := attack(t, f.rate, slice)
					if err != nil {
						return err
					}
					t.fixed = t.fixed.Merge(r)
					t.loads = append(t.loads, r.Load)
					continue
				}
				r, err := attack(t, 0, slice)
				if err != nil {
					return err
				}
				t.max = t.max.Merge(r)
				t.loads = append(t.loads, r.Load)
			}
			logf("%s: round %d/%d done (load %s)", kind, round+1, f.rounds, loadgen.Load())
		}
	}
	return nil
}

func report(w io.Writer, f gatewayFlags, targets []*target, loadBefore string) {
	host, _ := os.Hostname()
	fmt.Fprintf(w, "\nGET /v1/restaurants (%s, %d CPUs; max: %d connections, rate unlimited, %s per target; fixed: %d req/s, %s per target;\n"+
		"%d interleaved rounds; latency of every answer at the client, loopback)\n\n",
		host, numCPU(), f.connections, f.duration, f.rate, f.duration, f.rounds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "target\tmax req/s\tp50 ms\tp99 ms\t\tat %d req/s: p50 ms\tp99 ms\t\t1-min load during its slices\t\n", f.rate)
	for _, t := range targets {
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t\t%s\t%s\t\t%s\t\n", t.name, t.max.Throughput,
			loadgen.Ms(t.max.Latencies.Quantile(0.5)), loadgen.Ms(t.max.Latencies.Quantile(0.99)),
			loadgen.Ms(t.fixed.Latencies.Quantile(0.5)), loadgen.Ms(t.fixed.Latencies.Quantile(0.99)), loadRange(t.loads))
	}
	tw.Flush()
	gw, direct, ngx := targets[0], targets[1], targets[2]
	over50 := gw.fixed.Latencies.Quantile(0.5) - direct.fixed.Latencies.Quantile(0.5)
	over99 := gw.fixed.Latencies.Quantile(0.99) - direct.fixed.Latencies.Quantile(0.99)
	ratio := gw.max.Throughput / ngx.max.Throughput
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	fmt.Fprintf(w, "\ngateway p50 overhead over the direct call at %d req/s: %+.3f ms (target ≤ %.1f ms): %s   (p99 overhead %+.3f ms)\n",
		f.rate, msf(over50), msf(p50OverheadTarget), verdict(over50 <= p50OverheadTarget), msf(over99))
	fmt.Fprintf(w, "gateway max throughput / nginx's: %.0f / %.0f = %.2f (target ≥ %.1f): %s\n",
		gw.max.Throughput, ngx.max.Throughput, ratio, throughputTarget, verdict(ratio >= throughputTarget))
	fmt.Fprintf(w, "load average (1 5 15 min) before the stack started: %s; now: %s — every process, vegeta included, shares these CPUs\n",
		loadBefore, loadgen.Load())
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func fetch(ctx context.Context, url string, h http.Header) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", errors.New("GET " + url + ": " + resp.Status + ": " + string(body))
	}
	return string(body), nil
}

// loadRange is the lowest and highest 1-minute load average of the samples.
func loadRange(samples []string) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range samples {
		var v float64
		if _, err := fmt.Sscan(s, &v); err == nil {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		return "unknown"
	}
	return fmt.Sprintf("%.2f–%.2f", lo, hi)
}
