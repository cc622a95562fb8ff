package api_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/events/internal/store"
)

// benchEvents is the log the benchmarks read: restA has benchPerRestaurant
// events (1 in 50 a menu event, the rest orders) among benchRestaurants
// restaurants' events.
const (
	benchRestaurants   = 20
	benchPerRestaurant = 5000
)

func benchEnv(b *testing.B) *env {
	e := newEnv(b)
	e.skipSpec = true
	if _, err := e.store.Retention(b.Context(), e.now()); err != nil {
		b.Fatal(err)
	}
	rests := []string{restA}
	for i := 1; i < benchRestaurants; i++ {
		rests = append(rests, fmt.Sprintf("0b5a3c1e-8f51-4a0e-9b8e-%012d", 1000+i))
	}
	for n := 0; n < benchPerRestaurant; n += 250 {
		var batch []contracts.EventRecord
		for _, r := range rests {
			for i := range 250 {
				typ := contracts.EventOrderUpdated
				if (n+i)%50 == 0 {
					typ = contracts.EventMenuUpdated
				}
				x := ev(r, typ)
				x.Data = []byte(`{"orderId":"o-123456","status":"paid","totalMinor":2450,"lines":[{"name":"Pizza","quantity":2,"totalMinor":2450}]}`)
				batch = append(batch, x)
			}
		}
		tx := e.db.Gorm.Begin()
		if _, err := store.AppendTx(tx, e.now(), "bench", batch); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit().Error; err != nil {
			b.Fatal(err)
		}
	}
	_ = e.db.Gorm.Exec(`ANALYZE`).Error
	return e
}

// A full page of 200 events at a random place of a restaurant's 5,000.
func BenchmarkFeedPage(b *testing.B) {
	e := benchEnv(b)
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for b.Loop() {
		r, p := e.feed(fmt.Sprintf("/v1/restaurants/%s/events?limit=200&after=%d", restA, rng.IntN(benchPerRestaurant-200)), allScopes)
		if r.status != 200 || len(p.Events) != 200 {
			b.Fatalf("%d %d", r.status, len(p.Events))
		}
	}
}

// A filter selecting 1 event in 50: the page scans up to 1,000 numbers
// and loads the bodies of the 20 it keeps.
func BenchmarkFeedPageFiltered(b *testing.B) {
	e := benchEnv(b)
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for b.Loop() {
		r, p := e.feed(fmt.Sprintf("/v1/restaurants/%s/events?limit=200&types=menu.*&after=%d", restA, rng.IntN(benchPerRestaurant-1000)), allScopes)
		if r.status != 200 || len(p.Events) == 0 {
			b.Fatalf("%d %d", r.status, len(p.Events))
		}
	}
}

// One relay call of one event, numbered after 100,000 others.
func BenchmarkAppendOne(b *testing.B) {
	e := benchEnv(b)
	b.ResetTimer()
	for b.Loop() {
		e.appendOK(ev(restA, contracts.EventOrderCreated))
	}
}

// One relay call of one event for a restaurant with 20 webhook endpoints,
// 5 of them subscribed to its type: the append also queues 5 deliveries
// in its transaction.
func BenchmarkAppendOneWithWebhookEndpoints(b *testing.B) {
	e := benchEnv(b)
	for i := range 20 {
		typ := contracts.EventMenuUpdated
		if i%4 == 0 {
			typ = contracts.EventOrderCreated
		}
		if err := e.db.Gorm.Exec(`INSERT INTO webhook_endpoints (id, restaurant_id, client_id, grant_id, url, event_types, secret, created_at, updated_at)
VALUES (gen_random_uuid(), ?, 'client-1', 'g', 'https://example.com/h', ?::jsonb, 'whsec_AAAA', now(), now())`, restA, `["`+typ+`"]`).Error; err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		e.appendOK(ev(restA, contracts.EventOrderCreated))
	}
	b.StopTimer()
	var n int64
	e.db.Gorm.Raw(`SELECT count(*) FROM webhook_deliveries`).Scan(&n)
	if n != int64(5*b.N) {
		b.Fatalf("%d deliveries queued for %d appends", n, b.N)
	}
}
