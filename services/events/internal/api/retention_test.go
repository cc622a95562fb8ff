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
