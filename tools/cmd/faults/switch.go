package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// switchProbe measures what a hung Redis costs partners, apart from the
// load's own noise: one client reads sequentially through the gateway just
// before Redis hangs (the median is a read's normal cost) and for its first
// second. The gateway's Redis bound is paid by the read that finds Redis
// hung; the reads after it are counted in the gateway until Redis is back.
type switchProbe struct {
	before, after []time.Duration
}

// probeReads sends sequential reads for d, at least n of them.
func (l *load) probeReads(ctx context.Context, n int, d time.Duration) []time.Duration {
	var took []time.Duration
	for end := time.Now().Add(d); (len(took) < n || time.Now().Before(end)) && ctx.Err() == nil; {
		start := time.Now()
		l.do(ctx, "switch probe", http.MethodGet, "/v1/restaurants", nil)
		took = append(took, time.Since(start))
	}
	return took
}

// switchCostLimit is what the first read after the hang may cost over a
// normal one: the gateway's 100 ms Redis bound, and a margin for a shared
// machine's scheduling.
const switchCostLimit = 130 * time.Millisecond

// judge writes the probe's figures into the result: the extra cost of the
// slowest read of the first second, and how many reads paid more than half
// the bound. Once means one read, or a few more than a shared machine's
// scheduling makes as slow without a fault (the reads before it tell).
func (p switchProbe) judge(r *result) {
	if len(p.before) == 0 || len(p.after) == 0 {
		r.violate("hung Redis: no probe reads")
		return
	}
	normal := median(p.before)
	slow := func(ds []time.Duration) int {
		n := 0
		for _, d := range ds {
			if d-normal > 50*time.Millisecond {
				n++
			}
		}
		return n
	}
	extra := slices.Max(p.after) - normal
	paid, noise := slow(p.after), float64(slow(p.before))/float64(len(p.before))
	r.note = fmt.Sprintf("switch cost %v over a normal read (%v), paid by %d of %d reads in the first second (%d of %d before the fault)",
		extra.Round(time.Millisecond), normal.Round(100*time.Microsecond), paid, len(p.after), slow(p.before), len(p.before))
	if extra > switchCostLimit || float64(paid) > 2+2*noise*float64(len(p.after)) {
		r.violate(fmt.Sprintf("hung Redis: %s; want at most %v, once", r.note, switchCostLimit))
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
