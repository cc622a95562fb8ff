package testenv

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// Random gives a randomized concurrency test its random source: a new seed
// each run unless RACE_SEED replays a reported one. The seed is logged so
// that a failure names it.
func Random(t testing.TB) (*rand.Rand, uint64) {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RACE_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("RACE_SEED: %v", err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with RACE_SEED=%d)", seed, seed)
	return rand.New(rand.NewPCG(seed, 0)), seed //nolint:gosec // G404: test rounds replay from a logged seed, so the source must be seeded
}
