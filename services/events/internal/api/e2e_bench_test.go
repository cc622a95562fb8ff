package api_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"gorm.io/gorm"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/outbox"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/pkg/webhooksig"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/contracts/eventsclient"
	"partnerapi.dev/services/events/internal/delivery"
)

// BenchmarkCommitToWebhook measures, one write at a time, the delay from
// the commit of a write that records an event in its outbox to the
// webhook's arrival at a receiver: a writing service's schema with the
// real relay (eventsclient.StartRelay), the events service's append API on
// a real HTTP listener, the webhook worker as serve runs it (1 s poll) and a
// loopback receiver. Identity's grant lookup is answered by an in-test
// server (cached 5 s, as in production). "notify": the worker wakes on the
// appends' NOTIFY; "poll": the worker only polls, for comparison.
func BenchmarkCommitToWebhook(b *testing.B) {
	for _, c := range []struct {
		name string
		wake bool
	}{{"notify", true}, {"poll", false}} {
		b.Run(c.name, func(b *testing.B) { benchCommitToWebhook(b, c.wake) })
	}
}

func benchCommitToWebhook(b *testing.B, wake bool) {
	p := newPipeline(b, wake, time.Second)
	write := func() time.Duration {
		arrived := p.writeAsync()
		committed := time.Now()
		select {
		case at := <-arrived:
			return at.Sub(committed)
		case <-time.After(30 * time.Second):
			b.Fatal("event not delivered within 30 s")
		}
		return 0
	}
	write() // the relay's and the worker's first connections, the grant cached
	var lat latencies
	for b.Loop() {
		lat = append(lat, write())
	}
	lat.report(b)
}

// pipeline is a writing service's outbox and relay, the events service on
// a real listener, its webhook worker and a receiver subscribed to
// menu.updated of restA.
type pipeline struct {
	tb      testing.TB
	writer  *database.DB
	mu      sync.Mutex
	arrived map[string]chan time.Time
}

// newPipeline starts a pipeline whose worker polls every poll and, with
// wake, also wakes on appends.
func newPipeline(tb testing.TB, wake bool, poll time.Duration) *pipeline {
	e := newEnv(tb)
	e.skipSpec = true
	e.store.Now = nil // real time: the worker compares due times with its clock
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	p := &pipeline{tb: tb, arrived: map[string]chan time.Time{}}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	go func() { _ = e.app.Listener(ln) }()
	tb.Cleanup(func() { _ = e.app.Shutdown() })

	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		p.mu.Lock()
		ch := p.arrived[r.Header.Get("webhook-id")]
		p.mu.Unlock()
		if ch != nil {
			ch <- at
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	tb.Cleanup(receiver.Close)

	grant := contracts.Grant{GrantID: "g", ClientID: "client-1", ClientStatus: "approved", Status: "active",
		ExpiresAt: time.Now().Add(24 * time.Hour), Scopes: allScopes, Boundary: "restaurant",
		Restaurants: []contracts.GrantRestaurant{{RestaurantID: restA}}}
	identity := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := e.keys.Verify(r.Header.Get(internalctx.Header)); err != nil {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(grant)
	}))
	tb.Cleanup(identity.Close)
	// previous_until as the store writes it (the column's -infinity
	// default does not scan into a time.Time).
	if err := e.db.Gorm.Exec(`INSERT INTO webhook_endpoints (id, restaurant_id, client_id, grant_id, url, event_types, secret, previous_until, created_at, updated_at)
VALUES (gen_random_uuid(), ?, 'client-1', 'g', ?, '["menu.updated"]'::jsonb, ?, now(), now(), now())`, restA, receiver.URL+"/hook", webhooksig.NewSecret()).Error; err != nil {
		tb.Fatal(err)
	}
	w := &delivery.Worker{Repo: e.store, Client: delivery.Client(true), Parallel: 16,
		Grants: &delivery.Grants{IdentityURL: identity.URL, Keys: e.keys, Client: identity.Client(), TTL: 5 * time.Second}}
	if wake {
		w.Wake = e.listener.Appended()
	}
	workerDone := make(chan struct{})
	go func() { w.Run(ctx, poll); close(workerDone) }()
	tb.Cleanup(func() { cancel(); <-workerDone })

	// The writing service: its own database with an outbox and its relay.
	wu := testenv.NewDatabase(tb, "writer", database.MigrateURL("svc", fstest.MapFS{}, outbox.Migration(1), outbox.TraceMigration(2), outbox.ActorMigration(3)))
	p.writer, err = database.Open(ctx, database.Config{URL: config.Secret(wu)}, "svc")
	if err != nil {
		tb.Fatal(err)
	}
	relay := eventsclient.StartRelay(ctx, p.writer.Gorm, eventsclient.Config{URL: "http://" + ln.Addr().String(), Token: config.Secret(token)}, "bench")
	tb.Cleanup(func() { _ = relay.Fn(context.Background()); _ = p.writer.Close(context.Background()) })
	return p
}

var pipelineData = []byte(`{"menu":{"id":"6f1c2b8e-5d0a-4c3e-9f7b-2a1d3c4e5f60","name":"Lunch","activeOnPos":false,"activeOnline":true,"categoryCount":12,"itemCount":180},"itemIds":["a1"]}`)

// writeAsync commits a write recording one menu.updated event and returns
// the channel that receives the time its webhook arrives.
func (p *pipeline) writeAsync() <-chan time.Time {
	id := outbox.NewID()
	ch := make(chan time.Time, 2)
	p.mu.Lock()
	p.arrived[id] = ch
	p.mu.Unlock()
	if err := p.writer.Gorm.Transaction(func(tx *gorm.DB) error {
		return outbox.Record(tx, outbox.Event{ID: id, Type: contracts.EventMenuUpdated, RestaurantID: restA, Data: pipelineData})
	}); err != nil {
		p.tb.Fatal(err)
	}
	return ch
}
