// Command testrun runs the test tiers of the Makefile: each module's go vet
// and go test (with GOWORK=off, so every module builds on its own), and the
// fuzz targets, several at once. One module at a time leaves the CPUs idle
// for much of the run, while its tests wait on Postgres, Redis, browsers and
// the processes they start; a few side by side keep them busy.
//
//	testrun [-jobs N] [-flags "go test flags"] [-fuzz module:package:target ...] [-fuzz-count 20000x] module ...
//
// Each job's output is printed whole when it ends, with its time, so the
// output of jobs running together never interleaves. The first job to fail
// stops the others; its output is printed last. The longest jobs of the last
// run (.cache/testrun-times.json) start first, so a long one does not start
// last and run alone at the end.
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// timesFile keeps each job's last duration in seconds, to start the long
// ones first.
const timesFile = ".cache/testrun-times.json"

// job is one module's vet and tests, or one fuzz target.
type job struct {
	name  string // what the output and the times file call it
	dir   string // the module
	steps [][]string
}

// result is how a job ended.
type result struct {
	job    job
	took   time.Duration
	cpu    time.Duration // user and system time of the job's processes (not of the servers they use)
	output []byte
	err    error
}

type fuzzTargets []string

func (f *fuzzTargets) String() string     { return strings.Join(*f, " ") }
func (f *fuzzTargets) Set(v string) error { *f = append(*f, v); return nil }

func main() {
	jobs := flag.Int("jobs", 3, "how many jobs run at once")
	testFlags := flag.String("flags", "", "go test flags, space-separated")
	fuzzCount := flag.String("fuzz-count", "20000x", "-fuzztime of each fuzz target: a count of inputs (Nx)")
	var fuzz fuzzTargets
	flag.Var(&fuzz, "fuzz", "a fuzz target to run, as module:package:target (repeatable)")
	flag.Parse()
	if *jobs < 1 {
		fail("-jobs must be at least 1")
	}
	var all []job
	for _, m := range flag.Args() {
		all = append(all, job{name: m, dir: m, steps: [][]string{
			{"go", "vet", "./..."},
			append(append([]string{"go", "test"}, strings.Fields(*testFlags)...), "./..."),
		}})
	}
	for _, f := range fuzz {
		j, err := fuzzJob(f, *fuzzCount)
		if err != nil {
			fail(err.Error())
		}
		all = append(all, j)
	}
	if len(all) == 0 {
		fail("name the modules to test")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	results, failed := run(ctx, longestFirst(all), *jobs)
	saveTimes(results)
	if failed != nil {
		fmt.Printf("\n== %s FAILED after %s\n%s", failed.job.name, seconds(failed.took), failed.output)
		fail(fmt.Sprintf("%s: %v", failed.job.name, failed.err))
	}
	fmt.Printf("== all %d passed in %s with %d at once:", len(results), seconds(time.Since(start)), *jobs)
	slices.SortFunc(results, func(a, b result) int { return cmp.Compare(b.took, a.took) })
	for _, r := range results {
		fmt.Printf(" %s %s", r.job.name, seconds(r.took))
	}
	fmt.Println()
}

// fuzzJob runs one fuzz target from its seed corpus: Go replays the inputs
// earlier runs generated (kept in GOCACHE/fuzz) before fuzzing, and that
// corpus grows with every run, so the job drops it first. A failing input
// is saved under the package's testdata/fuzz, so nothing found is lost.
func fuzzJob(spec, count string) (job, error) {
	parts := strings.Split(spec, ":")
	if len(parts) != 3 {
		return job{}, fmt.Errorf("-fuzz %q: want module:package:target", spec)
	}
	m, pkg, target := parts[0], parts[1], parts[2]
	return job{name: "fuzz " + m + " " + target, dir: m, steps: [][]string{
		{"sh", "-c", `rm -rf "$(go env GOCACHE)/fuzz/$(go list "$1")/$2"`, "sh", pkg, target},
		{"go", "test", "-run", "^$", "-fuzz", "^" + target + "$", "-fuzztime", count, "-timeout", "10m", pkg},
	}}, nil
}

// run runs the jobs, n at once, printing each one's output as it passes. On
// the first failure it stops the others and returns the failure.
func run(ctx context.Context, jobs []job, n int) ([]result, *result) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	queue := make(chan job)
	done := make(chan result)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for j := range queue {
				if ctx.Err() != nil {
					continue // stopped: no job starts after a failure
				}
				fmt.Printf("== %s started (%s)\n", j.name, time.Now().Format(time.TimeOnly))
				r := runJob(ctx, j)
				if r.err != nil {
					cancel() // before the next job is taken
				}
				done <- r
			}
		})
	}
	go func() {
		defer close(queue)
		for _, j := range jobs {
			select {
			case queue <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(done) }()

	var results []result
	var failed *result
	for r := range done {
		switch {
		case failed != nil:
			// Stopped because of the first failure: not a result.
		case r.err != nil:
			failed = &r
		default:
			fmt.Printf("== %s passed in %s, %s of CPU (%s)\n%s", r.job.name, seconds(r.took), seconds(r.cpu), time.Now().Format(time.TimeOnly), r.output)
			results = append(results, r)
		}
	}
	if failed == nil && ctx.Err() != nil {
		failed = &result{job: job{name: "testrun"}, err: ctx.Err()}
	}
	return results, failed
}

// runJob runs a job's steps in its module, output gathered. The steps run in
// a process group of their own, so that stopping a job also stops the test
// binaries and servers its go test started.
func runJob(ctx context.Context, j job) result {
	start := time.Now()
	var out bytes.Buffer
	var cpu time.Duration
	for _, step := range j.steps {
		cmd := exec.CommandContext(ctx, step[0], step[1:]...)
		cmd.Dir = j.dir
		cmd.Env = append(os.Environ(), "GOWORK=off")
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 10 * time.Second
		err := cmd.Run()
		if cmd.ProcessState != nil {
			// wait4's usage includes the descendants the step waited for:
			// the compiler, the test binaries.
			cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
		if err != nil {
			return result{job: j, took: time.Since(start), cpu: cpu, output: out.Bytes(), err: fmt.Errorf("%s: %w", strings.Join(step, " "), err)}
		}
	}
	return result{job: j, took: time.Since(start), cpu: cpu, output: out.Bytes()}
}

// longestFirst orders the jobs by their last run's duration, longest first;
// jobs never timed go first, in the order given.
func longestFirst(jobs []job) []job {
	times := readTimes()
	sorted := slices.Clone(jobs)
	slices.SortStableFunc(sorted, func(a, b job) int {
		ta, oka := times[a.name]
		tb, okb := times[b.name]
		switch {
		case oka != okb && !oka:
			return -1
		case oka != okb:
			return 1
		}
		return cmp.Compare(tb, ta)
	})
	return sorted
}

// readTimes reads the last durations; an unreadable file only loses the
// ordering.
func readTimes() map[string]float64 {
	times := map[string]float64{}
	if b, err := os.ReadFile(timesFile); err == nil {
		_ = json.Unmarshal(b, &times)
	}
	return times
}

// saveTimes records the durations of the jobs that passed, keeping the
// others' earlier ones.
func saveTimes(results []result) {
	times := readTimes()
	for _, r := range results {
		times[r.job.name] = math.Round(r.took.Seconds())
	}
	b, err := json.MarshalIndent(times, "", "  ")
	if err == nil {
		err = errors.Join(os.MkdirAll(filepath.Dir(timesFile), 0o755), os.WriteFile(timesFile, b, 0o644))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "testrun: keep the job times: %v\n", err)
	}
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.0fs", d.Seconds()) }

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "testrun:", msg)
	os.Exit(1)
}
