package api_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"partnerapi.dev/services/contracts"
)

// Retention drops a day while writers append and a reader pages: no
// append fails or deadlocks, and the reader, restarting from oldestSeq
// when told its cursor expired, reads every event appended after the drop's
// day without a hole.
func TestRetentionWhileAppendingAndReading(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	if _, err := e.store.Retention(ctx, e.now()); err != nil {
		t.Fatal(err)
	}
	var old []contracts.EventRecord
	for range 1000 {
		old = append(old, ev(restA, contracts.EventOrderCreated))
	}
	for i := 0; i < len(old); i += 250 {
		e.appendOK(old[i : i+250]...)
	}
	e.advance(31 * 24 * time.Hour)

	var wg sync.WaitGroup
	fresh := make([][]string, 4)
	for w := range fresh {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 30 {
				x := ev(restA, contracts.EventOrderUpdated)
				r := e.appendRaw(token, contracts.EventAppend{Source: "orders", Events: []contracts.EventRecord{x}})
				if r.status != 200 {
					t.Errorf("append during retention: %d %s", r.status, r.body)
					return
				}
				fresh[w] = append(fresh[w], x.ID)
			}
		}()
	}
	// Retention starts once the reader is in the old day, far from its end.
	reading := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-reading
		if _, err := e.store.Retention(ctx, e.now()); err != nil {
			t.Errorf("retention: %v", err)
		}
	}()
	seen := map[string]int64{}
	var gone int
	after, last := int64(0), int64(0)
	var once sync.Once
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	for done := false; !done; {
		select {
		case <-finished:
			done = true
		default:
		}
		r, p := e.feed(fmt.Sprintf("/v1/restaurants/%s/events?after=%d&limit=5", restA, after), allScopes)
		once.Do(func() { close(reading) })
		switch r.status {
		case 410:
			var body struct{ OldestSeq int64 }
			_ = json.Unmarshal(r.body, &body)
			gone++
			after, last = body.OldestSeq-1, body.OldestSeq-1
			done = false
			continue
		case 200:
		default:
			t.Fatalf("%d %s", r.status, r.body)
		}
		for _, x := range p.Events {
			if x.Seq != last+1 {
				t.Fatalf("read %d after %d", x.Seq, last)
			}
			last = x.Seq
			seen[x.ID] = x.Seq
		}
		after = p.NextAfter
		if p.HasMore {
			done = false
		}
	}
	if t.Failed() {
		return
	}
	for w, ids := range fresh {
		for _, id := range ids {
			if _, ok := seen[id]; !ok {
				t.Fatalf("writer %d: %s never read", w, id)
			}
		}
	}
	if gone == 0 {
		t.Fatal("the reader never met the drop: the test proves nothing")
	}
}

// A page bounds its queries to the days that hold its numbers (event_days):
// pages starting anywhere, crossing a day, and a filtered page whose scan
// window ends a day early, all see every number in order.
func TestPagesAcrossDays(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	menuAt := map[int64]bool{1100: true, 1500: true}
	var seq int64
	for d := range 3 {
		for range 2 {
			var batch []contracts.EventRecord
			for range 300 {
				seq++
				typ := contracts.EventOrderCreated
				if menuAt[seq] {
					typ = contracts.EventMenuUpdated
				}
				batch = append(batch, ev(restA, typ))
			}
			e.appendOK(batch...)
		}
		if d < 2 {
			e.advance(24 * time.Hour)
		}
	}
	for _, after := range []int64{0, 1, 299, 550, 599, 600, 601, 1199, 1200, 1700, 1799, 1800} {
		_, p := e.feed(fmt.Sprintf("/v1/restaurants/%s/events?limit=200&after=%d", restA, after), allScopes)
		want := min(200, 1800-after)
		if int64(len(p.Events)) != want {
			t.Fatalf("after %d: %d events, want %d", after, len(p.Events), want)
		}
		for i, x := range p.Events {
			if x.Seq != after+1+int64(i) {
				t.Fatalf("after %d: event %d has seq %d", after, i, x.Seq)
			}
		}
	}
	cases := []struct {
		after     int64
		seqs      []int64
		nextAfter int64
	}{
		{0, nil, 1000},                    // the window 1 … 1000 ends in the second day
		{1000, []int64{1100, 1500}, 1800}, // 1001 … 1800 spans the second and third
		{1100, []int64{1500}, 1800},
	}
	for _, c := range cases {
		_, p := e.feed(fmt.Sprintf("/v1/restaurants/%s/events?limit=200&types=menu.*&after=%d", restA, c.after), allScopes)
		var got []int64
		for _, x := range p.Events {
			got = append(got, x.Seq)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.seqs) || p.NextAfter != c.nextAfter {
			t.Fatalf("after %d: seqs %v nextAfter %d, want %v %d", c.after, got, p.NextAfter, c.seqs, c.nextAfter)
		}
	}
}
