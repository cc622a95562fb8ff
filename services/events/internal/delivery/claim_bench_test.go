package delivery_test

import (
	"context"
	"testing"
	"time"

	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/events/internal/domain"
)

// BenchmarkClaimBesideABusyBacklog measures one claim when an endpoint with
// its share in flight has 10,000 due deliveries queued ahead of another
// endpoint's one: the claim skips the backlog in its scan.
func BenchmarkClaimBesideABusyBacklog(b *testing.B) {
	e := newEnv(b)
	busy := e.endpoint("http://127.0.0.1:9/busy", contracts.EventOrderCreated)
	for range 20 {
		batch := make([]contracts.EventRecord, 500)
		for i := range batch {
			batch[i] = ev(restA, contracts.EventOrderCreated)
		}
		e.appendEvents(batch...)
	}
	e.endpoint("http://127.0.0.1:9/other", contracts.EventOrderUpdated)
	ctx := context.Background()
	l := domain.ClaimLimits{N: 12, PerEndpoint: 4, InFlight: map[string]int{busy.ID: 4}}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		e.appendEvents(ev(restA, contracts.EventOrderUpdated))
		b.StartTimer()
		jobs, err := e.store.Claim(ctx, e.now(), time.Minute, l)
		if err != nil || len(jobs) != 1 {
			b.Fatalf("%d jobs, %v", len(jobs), err)
		}
	}
}
