package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// load is the partner load: reads and keyed writes through the gateway.
type load struct {
	base, token, restaurant, runID string
	client                         *http.Client
	// items are two catalog items of the restaurant, added to each
	// created menu.
	items []string
	// days hand out business dates to correction scenarios: one scenario
	// per day at a time, so two never race for a day's revision.
	days *dayPool

	mu      sync.Mutex
	samples []sample
	chains  []*chain
	seq     int
}

// sample is one request's outcome.
type sample struct {
	op      string
	start   time.Time
	took    time.Duration
	status  int // 0: no HTTP answer
	problem string
}

func (l *load) record(s sample) {
	l.mu.Lock()
	l.samples = append(l.samples, s)
	l.mu.Unlock()
}

// next numbers a scenario (unique names within the run).
func (l *load) next() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	return l.seq
}

func (l *load) addChain(c *chain) {
	l.mu.Lock()
	l.chains = append(l.chains, c)
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
	raw, readErr := io.ReadAll(res.Body)
	res.Body.Close()
	s.took, s.status = time.Since(start), res.StatusCode
	switch {
	case readErr != nil:
		if ctx.Err() == nil {
			s.problem = fmt.Sprintf("%d answer cut short: %v", res.StatusCode, readErr)
			l.record(s)
		}
		return 0, nil
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

// get reads a JSON answer into v; false unless 200.
func (l *load) get(ctx context.Context, op, path string, v any) bool {
	code, raw := l.do(ctx, op, http.MethodGet, path, nil)
	return code == http.StatusOK && json.Unmarshal(raw, v) == nil
}

func (l *load) path(rest string) string { return "/v1/restaurants/" + l.restaurant + rest }

// worker reads, and every fourth request starts a write scenario: a menu
// published, a catalog import edited, or a payment correction undone, in
// turn.
func (l *load) worker(ctx context.Context, w int) {
	today := time.Now().UTC().Format("2006-01-02")
	reads := []struct{ op, path string }{
		{"orders search", l.path("/orders?limit=20")},
		{"payment report", l.path("/payment-report?scope=day&start_date=" + today + "&end_date=" + today)},
		{"menu list", l.path("/menus")},
	}
	for i := 0; ctx.Err() == nil; i++ {
		if i%4 == 3 {
			var c *chain
			switch n := l.next(); n % 3 {
			case 0:
				c = l.menuChain(n)
			case 1:
				c = l.importChain(n)
			default:
				if c = l.correctionChain(ctx, n); c == nil {
					c = l.menuChain(n)
				}
			}
			l.addChain(c)
			if !l.runChain(ctx, c) {
				// A client whose write failed waits a little before the
				// next one, as a partner backing off does.
				sleep(ctx, 250*time.Millisecond)
			}
			continue
		}
		r := reads[(i+w)%len(reads)]
		l.do(ctx, r.op, http.MethodGet, r.path, nil)
	}
}

// result is one fault's line of the table.
type result struct {
	fault              string
	requests           int
	statuses           map[int]int
	noAnswer           int
	p99During, p99Back time.Duration
	// note is the fault's own measure (a hung database's 503 latency, a
	// hung Redis's switch cost).
	note       string
	violations int
	problems   []string
}

func (r *result) violate(p string) {
	r.violations++
	if len(r.problems) < 5 {
		r.problems = append(r.problems, p)
	}
}

// summarize takes the samples of requests started between start and end:
// during the fault (start..recovered) and after it. p99Back is over the
// requests started from 2 s after the recovery: latency must be back to
// normal by then. strict: no 5xx at all, not even 503 (a rolling
// restart).
func (l *load) summarize(f fault, start, recovered, end time.Time) result {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := result{fault: f.name, statuses: map[int]int{}}
	var during, back, unavailable []time.Duration
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
			r.violate(s.op + ": " + s.problem)
		}
		if f.strict && s.status >= 500 {
			r.violate(fmt.Sprintf("%s answered %d during a rolling restart", s.op, s.status))
		}
		switch {
		case s.start.Before(recovered):
			during = append(during, s.took)
			if s.status == http.StatusServiceUnavailable {
				unavailable = append(unavailable, s.took)
			}
		case !s.start.Before(settled):
			back = append(back, s.took)
			if s.status != http.StatusOK && s.status != http.StatusCreated && s.status != http.StatusAccepted && s.status != http.StatusConflict {
				r.violate(fmt.Sprintf("%s answered %d 2 s after the recovery", s.op, s.status))
			}
		}
	}
	r.p99During, r.p99Back = p99(during), p99(back)
	if os.Getenv("FAULTS_DEBUG") != "" {
		for _, s := range l.samples {
			if !s.start.Before(start) && s.start.Before(recovered) && s.took > time.Second {
				logf("slow during %s: %s %d %v at +%v", f.name, s.op, s.status, s.took, s.start.Sub(start).Round(time.Millisecond))
			}
		}
	}
	switch f.measure {
	case measureHung:
		// A hung database answers 503 fast: the statement bound and the
		// breaker, never the client's patience.
		p := p99(unavailable)
		r.note = fmt.Sprintf("503 p99 %v (%d answers)", p.Round(time.Millisecond), len(unavailable))
		if len(unavailable) == 0 || p >= time.Second {
			r.violate("hung database: " + r.note + ", want some, under 1 s")
		}
	}
	// Back to normal: the p99 from 2 s after the recovery stays within the
	// gateway's own budget for a partner request.
	if r.p99Back > 500*time.Millisecond {
		r.violate(fmt.Sprintf("p99 %v from 2 s after the recovery", r.p99Back))
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

// opCount is one write operation's tally.
type opCount struct{ keys, acked, conflicts int }

func render(results []result, ops map[string]*opCount, replay, effects []string) string {
	var b strings.Builder
	b.WriteString("| fault | requests | outcomes by status | p99 during | p99 after (from 2 s) | measure | violations |\n|---|---|---|---|---|---|---|\n")
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
		note := r.note
		if note == "" {
			note = "–"
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %d |\n", r.fault, r.requests, strings.Join(parts, " "),
			r.p99During.Round(time.Millisecond), r.p99Back.Round(time.Millisecond), note, r.violations)
	}
	var names []string
	for n := range ops {
		names = append(names, n)
	}
	slices.Sort(names)
	b.WriteString("\n| write | keys | acknowledged under load | 409 answers |\n|---|---|---|---|\n")
	for _, n := range names {
		o := ops[n]
		fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", n, o.keys, o.acked, o.conflicts)
	}
	fmt.Fprintf(&b, "\nEvery write sent twice at once with its idempotency key, replayed after the faults: %d violations; "+
		"effects checked through the API and in the database: %d violations.\n", len(replay), len(effects))
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
			if i == 30 {
				fmt.Fprintf(&b, "- … and %d more\n", len(all)-30)
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
