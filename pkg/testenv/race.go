package testenv

import (
	"os"
	"strconv"
	"sync"
	"testing"
)

// Rounds is how many rounds a concurrency test runs: def, or RACE_ROUNDS
// when it is set, for a longer run.
func Rounds(t testing.TB, def int) int {
	t.Helper()
	v := os.Getenv("RACE_ROUNDS")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("RACE_ROUNDS=%q: a positive number", v)
	}
	return n
}

// Together runs fns in goroutines released at the same moment, once all of
// them have started, and waits until they have all returned.
func Together(fns ...func()) {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	for _, fn := range fns {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			fn()
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
}
