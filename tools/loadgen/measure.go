// Package loadgen holds what the load tests behind make bench and make
// bench-orders share besides the running system (package system): nginx as
// a reference proxy, vegeta runs, latency quantiles and the machine's load.
package loadgen

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Load is the machine's load average (/proc/loadavg), "1.23 0.98 0.75".
func Load() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// Latencies are request durations of one run.
type Latencies []time.Duration

// Quantile is the exact q-quantile (nearest rank) of l.
func (l Latencies) Quantile(q float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// Ms formats d in milliseconds with two decimals.
func Ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

// Run is the outcome of one vegeta attack.
type Run struct {
	Requests   int
	OK         int           // 2xx answers
	Throughput float64       // 2xx answers per second of Elapsed
	Elapsed    time.Duration // attack time plus the wait for the last answers
	Latencies  Latencies     // of the 2xx answers
	Codes      map[uint16]int
	Errors     []string
	Load       string // load average right after the run
}

// Attack describes one vegeta run against a single target.
type Attack struct {
	Target      vegeta.Target
	Rate        int           // requests per second; 0 = as fast as the workers go
	Duration    time.Duration //
	Connections int           // workers and connections (fixed when Rate is 0)
}

// Do runs the attack and collects its results.
func (a Attack) Do() Run {
	conns := max(a.Connections, 1)
	opts := []func(*vegeta.Attacker){
		vegeta.Connections(conns), vegeta.MaxConnections(conns), vegeta.KeepAlive(true),
		vegeta.HTTP2(false), vegeta.Timeout(10 * time.Second), vegeta.Redirects(vegeta.NoFollow),
	}
	if a.Rate == 0 {
		opts = append(opts, vegeta.Workers(uint64(conns)), vegeta.MaxWorkers(uint64(conns)))
	} else {
		opts = append(opts, vegeta.Workers(uint64(min(conns, 10))), vegeta.MaxWorkers(uint64(conns)))
	}
	atk := vegeta.NewAttacker(opts...)
	pacer := vegeta.ConstantPacer{Freq: a.Rate, Per: time.Second}
	var m vegeta.Metrics
	r := Run{Codes: map[uint16]int{}}
	seen := map[string]bool{}
	for res := range atk.Attack(vegeta.NewStaticTargeter(a.Target), pacer, a.Duration, "") {
		m.Add(res)
		r.Requests++
		r.Codes[res.Code]++
		if res.Code >= 200 && res.Code < 300 {
			r.OK++
			r.Latencies = append(r.Latencies, res.Latency)
		} else if res.Error != "" && !seen[res.Error] && len(r.Errors) < 5 {
			seen[res.Error] = true
			r.Errors = append(r.Errors, res.Error)
		}
	}
	m.Close()
	r.Elapsed = m.Duration + m.Wait
	r.Throughput = m.Throughput
	r.Load = Load()
	return r
}

// Merge adds the results of another run of the same target (a later slice).
func (r Run) Merge(o Run) Run {
	if r.Codes == nil {
		r.Codes = map[uint16]int{}
	}
	r.Requests += o.Requests
	r.OK += o.OK
	r.Elapsed += o.Elapsed
	r.Latencies = append(r.Latencies, o.Latencies...)
	for c, n := range o.Codes {
		r.Codes[c] += n
	}
	r.Errors = append(r.Errors, o.Errors...)
	if r.Elapsed > 0 {
		r.Throughput = float64(r.OK) / r.Elapsed.Seconds()
	}
	r.Load = o.Load
	return r
}

// Failures describes non-2xx answers, "" when every answer was 2xx.
func (r Run) Failures() string {
	if r.OK == r.Requests {
		return ""
	}
	var parts []string
	for code, n := range r.Codes {
		if code < 200 || code >= 300 {
			parts = append(parts, fmt.Sprintf("%d×%d", n, code))
		}
	}
	slices.Sort(parts)
	return fmt.Sprintf("%d of %d failed (%s) %s", r.Requests-r.OK, r.Requests, strings.Join(parts, ", "), strings.Join(r.Errors, "; "))
}

// Get is a GET target with headers.
func Get(url string, header http.Header) vegeta.Target {
	return vegeta.Target{Method: http.MethodGet, URL: url, Header: header}
}
