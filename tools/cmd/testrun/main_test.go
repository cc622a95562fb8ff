package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func shJob(name, script string) job {
	return job{name: name, dir: ".", steps: [][]string{{"sh", "-c", script}}}
}

func TestRunRunsJobsSideBySide(t *testing.T) {
	dir := t.TempDir()
	// Each job waits for the other to have started: one at a time, they
	// would wait until the deadline.
	wait := func(mine, other string) job {
		return shJob(mine, "touch "+filepath.Join(dir, mine)+"; while [ ! -e "+filepath.Join(dir, other)+" ]; do sleep 0.05; done; echo "+mine+" saw "+other)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	results, failed := run(ctx, []job{wait("a", "b"), wait("b", "a")}, 2)
	if failed != nil {
		t.Fatalf("%s failed: %v", failed.job.name, failed.err)
	}
	var outputs []string
	for _, r := range results {
		outputs = append(outputs, string(r.output))
	}
	slices.Sort(outputs)
	if want := []string{"a saw b\n", "b saw a\n"}; !slices.Equal(outputs, want) {
		t.Fatalf("outputs %q, want %q", outputs, want)
	}
}

func TestRunStopsTheOthersAtTheFirstFailure(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "finished")
	results, failed := run(t.Context(), []job{
		shJob("slow", "sleep 20; touch "+marker),
		shJob("broken", "echo what went wrong; exit 3"),
		shJob("queued", "touch "+marker),
	}, 2)
	if failed == nil || failed.job.name != "broken" {
		t.Fatalf("failed = %+v, want the job named broken", failed)
	}
	if string(failed.output) != "what went wrong\n" {
		t.Fatalf("the failure's output is %q", failed.output)
	}
	if len(results) != 0 {
		t.Fatalf("%d jobs passed after the failure", len(results))
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("a job ran on after the failure (stat: %v)", err)
	}
}

func TestLongestFirst(t *testing.T) {
	t.Chdir(t.TempDir())
	saveTimes([]result{{job: job{name: "short"}, took: 5 * time.Second}, {job: job{name: "long"}, took: 90 * time.Second}})
	var names []string
	for _, j := range longestFirst([]job{{name: "short"}, {name: "long"}, {name: "new"}, {name: "new too"}}) {
		names = append(names, j.name)
	}
	if want := []string{"new", "new too", "long", "short"}; !slices.Equal(names, want) {
		t.Fatalf("order %q, want %q", names, want)
	}
	// A later run keeps the times of jobs it did not run.
	saveTimes([]result{{job: job{name: "new"}, took: time.Second}})
	if got := readTimes(); got["long"] != 90 || got["new"] != 1 {
		t.Fatalf("times after a second run: %v", got)
	}
}
