package delivery_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/events/internal/delivery"
	"partnerapi.dev/services/events/internal/domain"
)

// revocation is the authorization.revoked event of grant on r.
func revocation(r, grantID string) contracts.EventRecord {
	e := ev(r, contracts.EventAuthorizationRevoked)
	e.Data, _ = json.Marshal(contracts.AuthorizationRevoked{AuthorizationID: grantID, ClientID: client,
		RevokedAt: time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC), RevokedBy: contracts.RevokedByOwner})
	return e
}

// The revoked authorization's endpoints get its authorization.revoked event,
// subscribed or not, although identity now says the grant is revoked; every
// other delivery to them is blocked from the moment the event is appended,
// even those queued before it and even while the worker's cached grant still
// says active. Other authorizations' endpoints never get it.
func TestRevocationIsTheLastDelivery(t *testing.T) {
	e := newEnv(t)
	e.worker.Grants.(*delivery.Grants).TTL = time.Hour // a stale cache must not matter
	rcv, otherRcv := newReceiver(t), newReceiver(t)
	ep := e.endpoint(rcv.srv.URL, contracts.EventOrderCreated)
	other := domain.Endpoint{ID: uuid(), RestaurantID: restA, ClientID: "client-2", GrantID: uuid(), URL: otherRcv.srv.URL,
		EventTypes: []string{contracts.EventOrderCreated}, Secret: ep.Secret, CreatedAt: e.now(), UpdatedAt: e.now()}
	e.write(func(tx domain.WebhookTx) error { return tx.CreateEndpoint(other) })

	before := ev(restA, contracts.EventOrderCreated)
	e.appendEvents(before)
	e.run() // delivered; the worker now holds the grant as active
	queued := ev(restA, contracts.EventOrderCreated)
	e.appendEvents(queued) // waits in the queue
	e.id.set(func(g *contracts.Grant) { g.Status = "revoked" })
	final, after := revocation(restA, grant), ev(restA, contracts.EventOrderCreated)
	e.appendEvents(final, after)
	for e.run() > 0 {
	}

	var got []string
	for _, r := range rcv.requests() {
		got = append(got, r.header.Get("webhook-id"))
	}
	if len(got) != 2 || got[0] != before.ID || got[1] != final.ID {
		t.Fatalf("the endpoint got %v, want %s then %s only", got, before.ID, final.ID)
	}
	var body map[string]any
	if err := json.Unmarshal(rcv.requests()[1].body, &body); err != nil || body["type"] != contracts.EventAuthorizationRevoked ||
		body["data"].(map[string]any)["authorizationId"] != grant {
		t.Fatalf("final delivery %s", rcv.requests()[1].body)
	}
	for _, d := range e.deliveries(ep) {
		switch d.EventID {
		case before.ID, final.ID:
			if d.Status != domain.StatusSucceeded {
				t.Fatalf("delivery %+v", d)
			}
		case queued.ID, after.ID:
			if d.Status != domain.StatusBlocked || d.Attempts != 0 || !strings.Contains(d.LastError, "revoked") {
				t.Fatalf("delivery after the revocation %+v", d)
			}
		}
	}
	for _, d := range e.deliveries(other) {
		if d.EventType == contracts.EventAuthorizationRevoked {
			t.Fatalf("another authorization's endpoint got the revocation: %+v", d)
		}
	}
	for _, r := range otherRcv.requests() {
		if strings.Contains(string(r.body), contracts.EventAuthorizationRevoked) {
			t.Fatalf("another authorization's endpoint got %s", r.body)
		}
	}
}

// An endpoint bound since to another authorization does not get the old
// one's revocation.
func TestRevocationOfAnotherAuthorizationIsBlocked(t *testing.T) {
	e := newEnv(t)
	rcv := newReceiver(t)
	ep := e.endpoint(rcv.srv.URL, contracts.EventOrderCreated)
	e.appendEvents(revocation(restA, grant))
	e.write(func(tx domain.WebhookTx) error {
		cur, err := tx.ChangeEndpoint(domain.Owner{ClientID: client, RestaurantID: restA}, ep.ID)
		if err != nil {
			return err
		}
		cur.GrantID = uuid()
		return tx.SaveEndpoint(cur)
	})
	e.run()
	if n := len(rcv.requests()); n != 0 {
		t.Fatalf("%d deliveries", n)
	}
	if d := e.deliveries(ep)[0]; d.Status != domain.StatusBlocked || !strings.Contains(d.LastError, "another authorization") {
		t.Fatalf("delivery %+v", d)
	}
}

// A delivery already on the wire to the endpoint when the revocation
// arrives (it read the endpoint before) ends before authorization.revoked
// is sent, even by another replica: the revocation's delivery takes the
// endpoint's send lock exclusively, so it is the last request the endpoint
// receives.
func TestRevocationWaitsForTheSendOnTheWire(t *testing.T) {
	e := newEnv(t)
	rcv := newReceiver(t)
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // before the receiver closes, which waits for its requests
	rcv.next = func(n int) (int, http.Header) {
		if n == 1 {
			<-release
		}
		return 204, nil
	}
	e.endpoint(rcv.srv.URL, contracts.EventOrderCreated)
	onTheWire := ev(restA, contracts.EventOrderCreated)
	e.appendEvents(onTheWire)
	first := make(chan struct{})
	go func() {
		defer close(first)
		if _, err := e.worker.RunOnce(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	for len(rcv.requests()) == 0 {
		time.Sleep(10 * time.Millisecond)
	}

	final := revocation(restA, grant)
	e.appendEvents(final)
	// Another replica's worker, on the same database.
	replica := &delivery.Worker{Repo: e.store, Client: delivery.Client(true), Now: e.now, Rand: func() float64 { return 0.5 },
		Grants: e.worker.Grants, Parallel: 4}
	second := make(chan struct{})
	go func() {
		defer close(second)
		if _, err := replica.RunOnce(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	time.Sleep(500 * time.Millisecond)
	if n := len(rcv.requests()); n != 1 {
		t.Fatalf("the revocation was sent while a delivery was on the wire (%d requests)", n)
	}
	free()
	<-first
	<-second
	got := rcv.requests()
	if len(got) != 2 || got[0].header.Get("webhook-id") != onTheWire.ID || got[1].header.Get("webhook-id") != final.ID {
		t.Fatalf("the endpoint received %d requests, want the order then the revocation", len(got))
	}
}
