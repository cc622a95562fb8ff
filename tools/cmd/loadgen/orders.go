package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"

	"partnerapi.dev/tools/loadgen"
	"partnerapi.dev/tools/seed"
)

// Targets of the orders load test.
const (
	searchP99Target  = 15 * time.Millisecond
	detailsP99Target = 5 * time.Millisecond
)

// restaurant is a bench restaurant with what the service needs to answer it.
type restaurant struct {
	seed.Restaurant
	orders []sampled // drawn from the service's own answers
}

type sampled struct {
	OrderID      string `json:"orderId"`
	ReceiptHash  string `json:"receiptHash"`
	BusinessDate string `json:"businessDate"`
	Status       string `json:"status"`
	Total        int64  `json:"totalAmountMinor"`
	Items        []struct {
		Name string `json:"name"`
	} `json:"items"`
}

// call is one request of a class: which restaurant, and the path after
// /v1/restaurants/{id}.
type call struct {
	r    *restaurant
	path string
}

// class is one filter class (or details) with its requests and results.
type class struct {
	name    string
	details bool
	calls   []call
	via     map[string]*classRun // "service", "gateway"
}

type classRun struct {
	lat     loadgen.Latencies
	failed  int
	firstKO string
	matches int // summed over the search answers
	load    string
	slowest []timedCall // the slowest measured requests, slowest first
}

// timedCall is one measured request, for the list of the slowest.
type timedCall struct {
	took time.Duration
	path string
}

// keepSlowest adds a request to the run's slowest n.
func (run *classRun) keepSlowest(n int, d time.Duration, path string) {
	i, _ := slices.BinarySearchFunc(run.slowest, d, func(t timedCall, d time.Duration) int { return cmp.Compare(d, t.took) })
	if i < n {
		run.slowest = slices.Insert(run.slowest, i, timedCall{d, path})
		run.slowest = run.slowest[:min(len(run.slowest), n)]
	}
}

func runOrders(ctx context.Context, args []string) error {
	var f benchFlags
	fs := flag.NewFlagSet("orders", flag.ContinueOnError)
	f.register(fs, 300, 30)
	slowest := fs.Int("slowest", 0, "print the slowest N requests of each class and target (to see what sets a p99)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	e, err := startBench(ctx, f, benchOptions{name: "orders", scopes: "svc.restaurant.read svc.organization.read svc.orders.read"})
	if err != nil {
		return err
	}
	defer e.Close()
	importLine, count := e.importLines[0], e.orders

	var rs []*restaurant
	for _, r := range e.restaurants {
		rs = append(rs, &restaurant{Restaurant: r})
	}
	send := func(via string, c call) (int, []byte, time.Duration, error) {
		return e.send(via, "orders", http.MethodGet, c.r.Restaurant, c.path, nil)
	}

	rnd := rand.New(rand.NewPCG(42, 1)) //nolint:gosec // G404: reproducible request parameters, not secrets
	first, last := dateRange()
	if err := sample(rs, rnd, first, last, send); err != nil {
		return err
	}
	classes := buildClasses(rs, rnd, first, last, f.requests+f.warmup)

	vias := []string{"service", "gateway"}
	for _, cl := range classes {
		for _, via := range vias {
			cl.via[via] = &classRun{}
		}
		// Each request at both, alternating which goes first, so neither
		// always meets the colder cache.
		for i, c := range cl.calls {
			for k := range vias {
				via := vias[(i+k)%2]
				run := cl.via[via]
				code, body, d, err := send(via, c)
				if err != nil {
					return fmt.Errorf("%s %s: %w", cl.name, via, err)
				}
				if i < f.warmup {
					continue
				}
				if code != http.StatusOK {
					run.failed++
					if run.firstKO == "" {
						run.firstKO = fmt.Sprintf("%d %s for %s", code, truncate(body, 300), c.path)
					}
					continue
				}
				run.lat = append(run.lat, d)
				run.keepSlowest(*slowest, d, c.path)
				if !cl.details {
					var page struct {
						Data struct{ Matches []json.RawMessage }
					}
					_ = json.Unmarshal(body, &page)
					run.matches += len(page.Data.Matches)
				}
			}
		}
		for _, via := range vias {
			run := cl.via[via]
			run.load = loadgen.Load()
			logf("%-18s %-7s p50 %s ms  p99 %s ms  (load %s)", cl.name, via, loadgen.Ms(run.lat.Quantile(0.5)), loadgen.Ms(run.lat.Quantile(0.99)), run.load)
			for _, t := range run.slowest {
				logf("    %s ms %s", loadgen.Ms(t.took), t.path)
			}
		}
	}
	reportOrders(os.Stdout, importLine, count, f, classes)
	for _, cl := range classes {
		for via, run := range cl.via {
			if run.failed > 0 {
				return fmt.Errorf("%s via %s: %d requests failed, first: %s", cl.name, via, run.failed, run.firstKO)
			}
		}
	}
	return nil
}

// dateRange is the business dates the seed gives every restaurant.
func dateRange() (time.Time, time.Time) {
	last, _ := time.Parse(time.DateOnly, seed.OrdersEndDate)
	return last.AddDate(0, 0, -(seed.OrderDays - 1)), last
}

// window is a random 31-date window inside [first, last], or one containing
// day when day is not zero.
func window(rnd *rand.Rand, first, last, day time.Time) string {
	lo, hi := first, last.AddDate(0, 0, -30)
	if !day.IsZero() {
		lo, hi = maxTime(lo, day.AddDate(0, 0, -30)), minTime(hi, day)
	}
	span := int(hi.Sub(lo).Hours()/24) + 1
	start := lo.AddDate(0, 0, rnd.IntN(max(span, 1)))
	return "start_date=" + start.Format(time.DateOnly) + "&end_date=" + start.AddDate(0, 0, 30).Format(time.DateOnly)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// sample reads real orders from the service's own answers: the newest page
// and pages of a few random 31-day windows of every restaurant.
func sample(rs []*restaurant, rnd *rand.Rand, first, last time.Time, send func(string, call) (int, []byte, time.Duration, error)) error {
	for _, r := range rs {
		paths := []string{"/orders?limit=20"}
		for range 4 {
			paths = append(paths, "/orders?limit=20&"+window(rnd, first, last, time.Time{}))
		}
		for _, p := range paths {
			code, body, _, err := send("service", call{r, p})
			if err != nil {
				return err
			}
			if code != http.StatusOK {
				return fmt.Errorf("sample %s%s: %d %s", r.Name, p, code, truncate(body, 300))
			}
			var page struct {
				Data struct{ Matches []sampled }
			}
			if err := json.Unmarshal(body, &page); err != nil {
				return err
			}
			r.orders = append(r.orders, page.Data.Matches...)
		}
		if len(r.orders) == 0 {
			return fmt.Errorf("restaurant %s (%s) has no orders: was the bench data set loaded?", r.Name, r.RestaurantID)
		}
	}
	n := 0
	for _, r := range rs {
		n += len(r.orders)
	}
	logf("sampled %d orders over %d bench restaurants", n, len(rs))
	return nil
}

// buildClasses draws n requests per class with realistic parameters.
func buildClasses(rs []*restaurant, rnd *rand.Rand, first, last time.Time, n int) []*class {
	pick := func() (*restaurant, sampled) {
		r := rs[rnd.IntN(len(rs))]
		return r, r.orders[rnd.IntN(len(r.orders))]
	}
	day := func(o sampled) time.Time { d, _ := time.Parse(time.DateOnly, o.BusinessDate); return d }
	q := url.QueryEscape
	gen := map[string]func() call{
		"no filter": func() call {
			r, _ := pick()
			return call{r, fmt.Sprintf("/orders?limit=%d", []int{10, 20}[rnd.IntN(2)])}
		},
		"order_id": func() call {
			r, o := pick()
			return call{r, "/orders?order_id=" + q(o.OrderID)}
		},
		"receipt_reference": func() call {
			r, o := pick()
			return call{r, "/orders?receipt_reference=" + q(o.ReceiptHash) + "&" + window(rnd, first, last, day(o))}
		},
		"item_name": func() call {
			r, o := pick()
			for len(o.Items) == 0 {
				r, o = pick()
			}
			name := strings.ToLower(o.Items[rnd.IntN(len(o.Items))].Name)
			if words := strings.Fields(name); len(words) > 1 && rnd.IntN(2) == 0 { // half the time one word of it
				name = words[rnd.IntN(len(words))]
			}
			return call{r, "/orders?item_name=" + q(name) + "&" + window(rnd, first, last, time.Time{})}
		},
		"amount range": func() call {
			r, o := pick()
			lo := max(o.Total-int64(rnd.IntN(100)), 0)
			return call{r, fmt.Sprintf("/orders?min_total_minor=%d&max_total_minor=%d&%s", lo, lo+100, window(rnd, first, last, time.Time{}))}
		},
		"time window": func() call {
			r, _ := pick()
			start := rnd.IntN(24 * 60)
			end := (start + 30 + rnd.IntN(150)) % (24 * 60) // 30 min to 3 h, sometimes across midnight
			return call{r, fmt.Sprintf("/orders?start_time=%02d:%02d&end_time=%02d:%02d&%s", start/60, start%60, end/60, end%60, window(rnd, first, last, time.Time{}))}
		},
		"status": func() call {
			r, _ := pick()
			s := []string{"paid", "partially_refunded", "refunded", "voided"}[rnd.IntN(4)]
			return call{r, "/orders?status=" + s + "&" + window(rnd, first, last, time.Time{})}
		},
		"details": func() call {
			r, o := pick()
			return call{r, "/orders/" + url.PathEscape(o.OrderID)}
		},
	}
	var out []*class
	for _, name := range []string{"no filter", "order_id", "receipt_reference", "item_name", "amount range", "time window", "status", "details"} {
		cl := &class{name: name, details: name == "details", via: map[string]*classRun{}}
		for range n {
			cl.calls = append(cl.calls, gen[name]())
		}
		out = append(out, cl)
	}
	return out
}

func reportOrders(w io.Writer, importLine string, orders int64, f benchFlags, classes []*class) {
	host, _ := os.Hostname()
	fmt.Fprintf(w, "\nOrders at %.1fM (%s, %d CPUs)\n%s\n\n", float64(orders)/1e6, host, numCPU(), importLine)
	fmt.Fprintf(w, "%d sequential requests per class and target (after %d unmeasured; each request at both, alternating which goes first),\n"+
		"over the 20 bench restaurants, parameters drawn from orders the service returned; 31-day windows where the filter needs one\n\n", f.requests, f.warmup)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "class\tservice p50 ms\tp99 ms\t\tgateway p50 ms\tp99 ms\t\tmatches/page\ttarget p99\tmet?\tload after\t")
	for _, cl := range classes {
		s, g := cl.via["service"], cl.via["gateway"]
		target := searchP99Target
		if cl.details {
			target = detailsP99Target
		}
		verdict := "yes"
		if s.lat.Quantile(0.99) > target || g.lat.Quantile(0.99) > target {
			verdict = "NO"
			if s.lat.Quantile(0.99) <= target {
				verdict = "service only"
			}
		}
		matches := "-"
		if !cl.details && len(g.lat) > 0 {
			matches = fmt.Sprintf("%.1f", float64(s.matches+g.matches)/float64(len(s.lat)+len(g.lat)))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t\t%s\t%s\t\t%s\t%s\t%s\t%s\t\n", cl.name,
			loadgen.Ms(s.lat.Quantile(0.5)), loadgen.Ms(s.lat.Quantile(0.99)),
			loadgen.Ms(g.lat.Quantile(0.5)), loadgen.Ms(g.lat.Quantile(0.99)),
			matches, loadgen.Ms(target), verdict, g.load)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nload average (1 5 15 min) now: %s — Postgres, the services and this client share these CPUs\n", loadgen.Load())
}

// importBench pipes bin/seed --size bench --orders-out - into bin/orders import.
func importBench(ctx context.Context, bin, dbURL string, orders int) (time.Duration, error) {
	gen := exec.CommandContext(ctx, filepath.Join(bin, "seed"), "--size", "bench", "--bench-orders", fmt.Sprint(orders), "--orders-out", "-")
	imp := exec.CommandContext(ctx, filepath.Join(bin, "orders"), "import")
	imp.Env = append(withoutEnv("DATABASE_URL"), "DATABASE_URL="+dbURL)
	pipe, err := gen.StdoutPipe()
	if err != nil {
		return 0, err
	}
	imp.Stdin = pipe
	gen.Stderr, imp.Stdout, imp.Stderr = os.Stderr, os.Stderr, os.Stderr
	logf("loading the bench data set: bin/seed --size bench --bench-orders %d --orders-out - | bin/orders import (takes minutes)", orders)
	start := time.Now()
	if err := gen.Start(); err != nil {
		return 0, err
	}
	if err := imp.Start(); err != nil {
		_ = gen.Process.Kill()
		return 0, err
	}
	errImp := imp.Wait()
	if errImp != nil {
		_ = gen.Process.Signal(syscall.SIGTERM)
	}
	errGen := gen.Wait()
	took := time.Since(start)
	if errImp != nil {
		return 0, fmt.Errorf("orders import: %w", errImp)
	}
	if errGen != nil {
		return 0, fmt.Errorf("seed --orders-out: %w", errGen)
	}
	return took, nil
}

func createDatabase(ctx context.Context, adminURL, name string) (string, error) {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", err
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
			return "", fmt.Errorf("create database %s: %w", name, err)
		}
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

func countOrders(ctx context.Context, dbURL string) (int64, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var n int64
	err = conn.QueryRow(ctx, "SELECT count(*) FROM orders.orders").Scan(&n)
	return n, err
}

// benchToken runs the OAuth flow for the bench organization's administrator,
// asking for the given scopes.
func benchToken(ctx context.Context, bin, base, org, scopes string) (string, error) {
	out, err := exec.CommandContext(ctx, filepath.Join(bin, "partnerctl"), "token", "--base-url", base,
		"--email", seed.AdminEmail, "--password", seed.DemoPassword, "--client-id", seed.DemoClientID,
		"--organization", org, "--scope", scopes, "--json").Output()
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
		return "", fmt.Errorf("partnerctl token: unexpected output %q", truncate(out, 300))
	}
	return tok.AccessToken, nil
}

func freeBytes(dir string) int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return -1
	}
	return int64(st.Bavail) * st.Bsize
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
