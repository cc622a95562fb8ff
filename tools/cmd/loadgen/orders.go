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
	ends    []int // len(lat) at the end of each round
	failed  int
	firstKO string
	matches int // summed over the search answers
	load    string
	slowest []timedCall // the slowest measured requests, slowest first
}

// roundP99s are the p99 of each round's answers; the whole run is one
// round when it was not measured in rounds.
func (run *classRun) roundP99s() []time.Duration {
	ends := run.ends
	if len(ends) == 0 {
		ends = []int{len(run.lat)}
	}
	var p99s []time.Duration
	from := 0
	for _, end := range ends {
		p99s = append(p99s, run.lat[from:end].Quantile(0.99))
		from = end
	}
	return p99s
}

// endRound ends a round and answers its latencies.
func (run *classRun) endRound() loadgen.Latencies {
	from := 0
	if len(run.ends) > 0 {
		from = run.ends[len(run.ends)-1]
	}
	run.ends = append(run.ends, len(run.lat))
	return run.lat[from:]
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

// ordersSide is one loaded data set under measurement.
type ordersSide struct {
	e       *benchEnv
	rs      []*restaurant
	classes []*class
}

func runOrders(ctx context.Context, args []string) error {
	var f benchFlags
	fs := flag.NewFlagSet("orders", flag.ContinueOnError)
	f.register(fs, 300, 30)
	slowest := fs.Int("slowest", 0, "print the slowest N requests of each class and target (to see what sets a p99)")
	compareOrders := fs.Int("compare-orders", 0, "also load a smaller data set of this many orders and measure both in one run with the same requests, taking turns request by request so both meet the same machine; the report adds each class's p99 change from this data set to -orders")
	compareData := fs.String("compare-data", "", "folder for the -compare-orders data set (as -data)")
	rounds := fs.Int("rounds", 1, "measure every class this many times over, -requests new requests each time, the classes taking turns; the report's p99 change is each round's change from -compare-orders to -orders, their median deciding, so that a moment the machine stalls moves one round, not the verdict")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *rounds < 1 {
		return fmt.Errorf("-rounds %d: want at least 1", *rounds)
	}
	sizes := []benchFlags{f}
	if *compareOrders > 0 {
		// Below BenchOrders the seed spreads orders over the same 20
		// restaurants, so the two data sets' restaurants would not share a
		// history and the same requests would ask different questions.
		if *compareOrders < seed.BenchOrders || *compareOrders >= f.orders {
			return fmt.Errorf("-compare-orders %d: want at least %d and fewer than -orders (%d), so that its restaurants have the larger data set's histories", *compareOrders, seed.BenchOrders, f.orders)
		}
		c := f
		c.orders, c.data = *compareOrders, *compareData
		sizes = []benchFlags{c, f}
	}
	var sides []*ordersSide
	for n, sf := range sizes {
		e, err := startBench(ctx, sf, benchOptions{name: "orders", scopes: "svc.restaurant.read svc.organization.read svc.orders.read",
			// item_name walks order_item_keys's primary key index-only (the bulk
			// load writes it all-visible).
			prewarmTables: []string{"orders.orders", "orders.order_item_names"}, prewarmIndexesOf: []string{"orders.order_item_keys"}})
		if err != nil {
			return err
		}
		defer e.Close()
		side := &ordersSide{e: e}
		for _, r := range e.restaurants {
			side.rs = append(side.rs, &restaurant{Restaurant: r})
		}
		if n == 0 {
			rnd := rand.New(rand.NewPCG(42, 1)) //nolint:gosec // G404: reproducible request parameters, not secrets
			first, last := dateRange()
			if err := sample(side.rs, rnd, first, last, side.send); err != nil {
				return err
			}
			side.classes = buildClasses(side.rs, rnd, first, last, f.warmup+*rounds*f.requests)
		} else if side.classes, err = sameCalls(sides[0].classes, side.rs); err != nil {
			return err
		}
		sides = append(sides, side)
	}

	for _, s := range sides {
		for _, cl := range s.classes {
			for _, via := range targets {
				cl.via[via] = &classRun{}
			}
		}
	}
	for r := range *rounds {
		steps := cycle(sides, r)
		for ci := range sides[0].classes {
			// The warm-up requests go before the first round.
			from, to := f.warmup+r*f.requests, f.warmup+(r+1)*f.requests
			if r == 0 {
				from = 0
			}
			for i := from; i < to; i++ {
				for _, st := range steps {
					if err := st.side.measure(st.side.classes[ci], st.via, i, i < f.warmup, *slowest); err != nil {
						return err
					}
				}
			}
			for _, s := range sides {
				cl := s.classes[ci]
				for _, via := range targets {
					run := cl.via[via]
					lat := run.endRound()
					run.load = loadgen.Load()
					logf("round %d/%d %.1fM %-18s %-7s p50 %s ms  p99 %s ms  (load %s)", r+1, *rounds, float64(s.e.orders)/1e6, cl.name, via, loadgen.Ms(lat.Quantile(0.5)), loadgen.Ms(lat.Quantile(0.99)), run.load)
				}
			}
		}
	}
	for _, s := range sides {
		for _, cl := range s.classes {
			for _, via := range targets {
				for _, t := range cl.via[via].slowest {
					logf("%.1fM %s %s slowest: %s ms %s", float64(s.e.orders)/1e6, cl.name, via, loadgen.Ms(t.took), t.path)
				}
			}
		}
	}
	for _, s := range sides {
		reportOrders(os.Stdout, strings.Join(s.e.importLines, "\n"), s.e.orders, len(s.rs), f, *rounds, s.classes)
	}
	if len(sides) == 2 {
		reportChange(os.Stdout, sides[0], sides[1])
	}
	for _, s := range sides {
		for _, cl := range s.classes {
			for via, run := range cl.via {
				if run.failed > 0 {
					return fmt.Errorf("%s via %s: %d requests failed, first: %s", cl.name, via, run.failed, run.firstKO)
				}
			}
		}
	}
	return nil
}

// sameCalls gives the larger data set the smaller one's requests: its first
// bench restaurants have the very same history (each keeps 50,000 orders
// drawn from its own seed), so both sizes answer identical questions and only
// the size of the tables around them differs.
func sameCalls(classes []*class, rs []*restaurant) ([]*class, error) {
	byID := map[string]*restaurant{}
	for _, r := range rs {
		byID[r.RestaurantID] = r
	}
	var out []*class
	for _, cl := range classes {
		c := &class{name: cl.name, details: cl.details, via: map[string]*classRun{}}
		for _, k := range cl.calls {
			r, ok := byID[k.r.RestaurantID]
			if !ok {
				return nil, fmt.Errorf("restaurant %s is not in the larger data set: -compare-orders must be the smaller one", k.r.Name)
			}
			c.calls = append(c.calls, call{r, k.path})
		}
		out = append(out, c)
	}
	return out, nil
}

func (s *ordersSide) send(via string, c call) (int, []byte, time.Duration, error) {
	return s.e.send(via, "orders", http.MethodGet, c.r.Restaurant, c.path, nil)
}

// step is one request of each cycle: a data set and a target.
type step struct {
	side *ordersSide
	via  string
}

// cycle is the order round r sends each request in: to every data set, at
// the service and through the gateway, forwards in even rounds and
// backwards in odd ones. The order is the same for every request of a
// round, so within a round every data set meets the same neighbours: each
// one's service request follows the previous data set's gateway request
// (the first follows the last), and its gateway request its own service
// request (the same query, which it finds in cache). A request's latency
// depends on which process answered the one before it; a fixed cycle
// keeps that alike for the data sets compared.
func cycle(sides []*ordersSide, r int) []step {
	var steps []step
	for _, s := range sides {
		for _, via := range targets {
			steps = append(steps, step{s, via})
		}
	}
	if r%2 == 1 {
		slices.Reverse(steps)
	}
	return steps
}

// measure sends request i of a class to one target and records it unless
// it is a warm-up request.
func (s *ordersSide) measure(cl *class, via string, i int, warmup bool, slowest int) error {
	c := cl.calls[i]
	run := cl.via[via]
	code, body, d, err := s.send(via, c)
	if err != nil {
		return fmt.Errorf("%s %s: %w", cl.name, via, err)
	}
	if warmup {
		return nil
	}
	if code != http.StatusOK {
		run.failed++
		if run.firstKO == "" {
			run.firstKO = fmt.Sprintf("%d %s for %s", code, truncate(body, 300), c.path)
		}
		return nil
	}
	run.lat = append(run.lat, d)
	run.keepSlowest(slowest, d, c.path)
	if !cl.details {
		var page struct {
			Data struct{ Matches []json.RawMessage }
		}
		_ = json.Unmarshal(body, &page)
		run.matches += len(page.Data.Matches)
	}
	return nil
}

// reportChange prints each class's p99 on the larger data set against the
// smaller one, both measured in the same run: the median of the rounds'
// p99s on each, and the change, the median of each round's change (a
// round's two p99s were measured request by request in turn), with the
// rounds' lowest and highest change beside it.
func reportChange(w io.Writer, small, large *ordersSide) {
	rounds := len(small.classes[0].via["service"].roundP99s())
	fmt.Fprintf(w, "\n%.1fM against %.1fM orders, measured in turn in the same run: p99 ms (median of %d rounds) and its change, the median of the rounds' changes (target: within +20%%)\n\n",
		float64(large.e.orders)/1e6, float64(small.e.orders)/1e6, rounds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "class\tservice small\tlarge\tchange\trounds\t\tgateway small\tlarge\tchange\trounds\t\twithin 20%?\t")
	for ci, cl := range small.classes {
		row, ok := cl.name, true
		for _, via := range []string{"service", "gateway"} {
			a, b := cl.via[via].roundP99s(), large.classes[ci].via[via].roundP99s()
			changes := make([]float64, len(a))
			for r := range a {
				changes[r] = float64(b[r])/float64(a[r]) - 1
			}
			change := median(changes)
			ok = ok && change <= 0.20
			row += fmt.Sprintf("\t%s\t%s\t%+.0f%%\t%+.0f…%+.0f%%\t", loadgen.Ms(median(a)), loadgen.Ms(median(b)), 100*change, 100*slices.Min(changes), 100*slices.Max(changes))
		}
		fmt.Fprintf(tw, "%s\t%s\t\n", row, map[bool]string{true: "yes", false: "NO"}[ok])
	}
	tw.Flush()
}

// median is the middle value of xs, the mean of the two middle ones when
// there are an even number.
func median[T time.Duration | float64](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
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

func reportOrders(w io.Writer, importLine string, orders int64, restaurants int, f benchFlags, rounds int, classes []*class) {
	asked := map[string]bool{}
	for _, cl := range classes {
		for _, c := range cl.calls {
			asked[c.r.RestaurantID] = true
		}
	}
	host, _ := os.Hostname()
	fmt.Fprintf(w, "\nOrders at %.1fM (%s, %d CPUs)\n%s\n\n", float64(orders)/1e6, host, numCPU(), importLine)
	fmt.Fprintf(w, "%d sequential requests per class and target in %d round(s) of %d (after %d unmeasured; each request at both, in a fixed cycle reversed every other round),\n"+
		"about %d of the %d bench restaurants, parameters drawn from orders the service returned; 31-day windows where the filter needs one\n\n", rounds*f.requests, rounds, f.requests, f.warmup, len(asked), restaurants)
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

// importBench pipes bin/seed --size bench --orders-out - into bin/orders
// import; it answers how long that took and the import's peak resident memory.
func importBench(ctx context.Context, bin, dbURL string, orders int) (time.Duration, int64, error) {
	gen := exec.CommandContext(ctx, filepath.Join(bin, "seed"), "--size", "bench", "--bench-orders", fmt.Sprint(orders), "--orders-out", "-")
	imp := exec.CommandContext(ctx, filepath.Join(bin, "orders"), "import")
	imp.Env = append(withoutEnv("DATABASE_URL"), "DATABASE_URL="+dbURL)
	pipe, err := gen.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	imp.Stdin = pipe
	gen.Stderr, imp.Stdout, imp.Stderr = os.Stderr, os.Stderr, os.Stderr
	logf("loading the bench data set: bin/seed --size bench --bench-orders %d --orders-out - | bin/orders import (takes minutes)", orders)
	start := time.Now()
	if err := gen.Start(); err != nil {
		return 0, 0, err
	}
	if err := imp.Start(); err != nil {
		_ = gen.Process.Kill()
		return 0, 0, err
	}
	errImp := imp.Wait()
	if errImp != nil {
		_ = gen.Process.Signal(syscall.SIGTERM)
	}
	errGen := gen.Wait()
	took := time.Since(start)
	if errImp != nil {
		return 0, 0, fmt.Errorf("orders import: %w", errImp)
	}
	if errGen != nil {
		return 0, 0, fmt.Errorf("seed --orders-out: %w", errGen)
	}
	var peak int64
	if u, ok := imp.ProcessState.SysUsage().(*syscall.Rusage); ok {
		peak = u.Maxrss << 10 // kilobytes on Linux
	}
	return took, peak, nil
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
