package api_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/events/internal/store"
)

// The guarantee, under load: 8 writers per restaurant append inside
// transactions that commit or roll back at random (some spanning two
// restaurants), while a reader per restaurant pages the feed. Every
// committed event is read exactly once, numbered 1..N without holes, each
// writer's events in the order it committed them, and no rolled-back event
// is ever read.
func TestConcurrentWritersAndReadersSeeEveryCommittedEventOnceInOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := e.store.Retention(t.Context(), e.now()); err != nil {
		t.Fatal(err)
	}
	restaurants := []string{restA, restB, restC}
	const writersPer, txPerWriter = 8, 15
	types := []string{contracts.EventOrderCreated, contracts.EventOrderUpdated, contracts.EventMenuUpdated, contracts.EventRefundRecorded}

	// committed[w] are writer w's committed batches, in commit order.
	committed := make([][][]contracts.EventRecord, len(restaurants)*writersPer)
	var rolledBack sync.Map // id → true
	var writers sync.WaitGroup
	var writing atomic.Int32
	for w := range committed {
		writers.Add(1)
		writing.Add(1)
		go func() {
			defer writers.Done()
			defer writing.Add(-1)
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			own := restaurants[w%len(restaurants)]
			for range txPerWriter {
				var batch []contracts.EventRecord
				for range 1 + rng.IntN(3) {
					batch = append(batch, ev(own, types[rng.IntN(len(types))]))
				}
				if rng.IntN(5) == 0 {
					batch = append(batch, ev(restaurants[rng.IntN(len(restaurants))], contracts.EventMenuCreated))
				}
				tx := e.db.Gorm.Begin()
				if _, err := store.AppendTx(tx, e.now(), "test", batch); err != nil {
					tx.Rollback()
					t.Errorf("writer %d: %v", w, err)
					return
				}
				// Hold the counter rows a moment, as a longer transaction would.
				time.Sleep(time.Duration(rng.IntN(300)) * time.Microsecond)
				if rng.IntN(10) < 2 {
					tx.Rollback()
					for _, x := range batch {
						rolledBack.Store(x.ID, true)
					}
					continue
				}
				if err := tx.Commit().Error; err != nil {
					t.Errorf("writer %d commit: %v", w, err)
					return
				}
				committed[w] = append(committed[w], batch)
			}
		}()
	}

	// One reader per restaurant pages until the writers are done and it has
	// read to the head.
	seen := make([][]feedPage, len(restaurants))
	var readers sync.WaitGroup
	for i, r := range restaurants {
		readers.Add(1)
		go func() {
			defer readers.Done()
			after := int64(0)
			for {
				done := writing.Load() == 0
				resp, p := e.feed(fmt.Sprintf("/v1/restaurants/%s/events?after=%d&limit=200", r, after), allScopes)
				if resp.status != 200 {
					t.Errorf("feed %s: %d %s", r, resp.status, resp.body)
					return
				}
				seen[i] = append(seen[i], p)
				after = p.NextAfter
				if done && !p.HasMore {
					return
				}
			}
		}()
	}
	writers.Wait()
	readers.Wait()
	if t.Failed() {
		return
	}

	seqOf := map[string]int64{}
	for i, r := range restaurants {
		next := int64(1)
		for _, p := range seen[i] {
			for _, x := range p.Events {
				if x.Seq != next || x.RestaurantID != r {
					t.Fatalf("%s: read seq %d (%s), want %d", r, x.Seq, x.RestaurantID, next)
				}
				if _, dup := seqOf[x.ID]; dup {
					t.Fatalf("%s: %s read twice", r, x.ID)
				}
				if _, ok := rolledBack.Load(x.ID); ok {
					t.Fatalf("%s: rolled-back %s read", r, x.ID)
				}
				seqOf[x.ID] = x.Seq
				next++
			}
		}
		t.Logf("%s: %d events read in %d pages", r, next-1, len(seen[i]))
	}
	total := 0
	for w, batches := range committed {
		last := map[string]int64{}
		for _, b := range batches {
			for _, x := range b {
				total++
				s, ok := seqOf[x.ID]
				if !ok {
					t.Fatalf("writer %d: committed %s never read", w, x.ID)
				}
				if s <= last[x.RestaurantID] {
					t.Fatalf("writer %d: %s numbered %d after %d: not in commit order", w, x.ID, s, last[x.RestaurantID])
				}
				last[x.RestaurantID] = s
			}
		}
	}
	if total != len(seqOf) {
		t.Fatalf("read %d events, %d committed", len(seqOf), total)
	}
	n := 0
	rolledBack.Range(func(any, any) bool { n++; return true })
	if n == 0 {
		t.Fatal("no transaction rolled back: the test proves nothing")
	}
	t.Logf("%d committed, %d rolled back", total, n)
}
