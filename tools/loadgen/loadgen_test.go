package loadgen

import (
	"testing"
	"time"
)

func TestQuantileIsNearestRank(t *testing.T) {
	var l Latencies
	for i := 100; i >= 1; i-- {
		l = append(l, time.Duration(i)*time.Millisecond)
	}
	for q, want := range map[float64]time.Duration{0.5: 50 * time.Millisecond, 0.99: 99 * time.Millisecond, 1: 100 * time.Millisecond, 0: time.Millisecond} {
		if got := l.Quantile(q); got != want {
			t.Errorf("Quantile(%v) = %v, want %v", q, got, want)
		}
	}
	if l[0] != 100*time.Millisecond {
		t.Error("Quantile sorted the caller's slice")
	}
	if (Latencies{}).Quantile(0.5) != 0 {
		t.Error("empty")
	}
}

func TestMergeAddsUp(t *testing.T) {
	a := Run{Requests: 10, OK: 10, Elapsed: time.Second, Latencies: Latencies{1}, Codes: map[uint16]int{200: 10}}
	b := Run{Requests: 30, OK: 29, Elapsed: time.Second, Latencies: Latencies{2, 3}, Codes: map[uint16]int{200: 29, 503: 1}}
	m := Run{}.Merge(a).Merge(b)
	if m.Requests != 40 || m.OK != 39 || m.Throughput != 19.5 || len(m.Latencies) != 3 || m.Codes[503] != 1 {
		t.Fatalf("%+v", m)
	}
	if m.Failures() == "" {
		t.Fatal("a 503 is a failure")
	}
}
