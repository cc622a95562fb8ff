package api_test

import (
	"strings"
	"testing"
	"time"

	"partnerapi.dev/services/contracts"
)

// A cursor past the restaurant's latest event is corrupted or another
// restaurant's: answering an empty page would skip every event up to it.
func TestFeedAfterBeyondTheHeadIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := "/v1/restaurants/" + restA + "/events"
	for _, after := range []string{"1", "500", "9223372036854775807"} {
		if r, _ := e.feed(base+"?after="+after, allScopes); r.status != 400 || !strings.Contains(string(r.body), "beyond") {
			t.Fatalf("after=%s before any event: %d %s", after, r.status, r.body)
		}
	}
	e.appendOK(ev(restA, contracts.EventOrderCreated), ev(restA, contracts.EventOrderUpdated))
	if r, p := e.feed(base+"?after=2", allScopes); r.status != 200 || p.NextAfter != 2 || p.HasMore {
		t.Fatalf("after=head: %d %s", r.status, r.body)
	}
	if r, _ := e.feed(base+"?after=3&wait=1", allScopes); r.status != 400 {
		t.Fatalf("after=head+1: %d %s", r.status, r.body)
	}
}

// Without after the feed starts at the oldest kept event, also once
// retention dropped the first ones; an explicit after below them is 410.
func TestFeedWithoutAfterStartsAtTheOldestKept(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	if _, err := e.store.Retention(ctx, e.now()); err != nil {
		t.Fatal(err)
	}
	e.appendOK(ev(restA, contracts.EventOrderCreated), ev(restA, contracts.EventOrderUpdated))
	e.advance(31 * 24 * time.Hour)
	kept := ev(restA, contracts.EventOrderRefunded)
	e.appendOK(kept)
	if _, err := e.store.Retention(ctx, e.now()); err != nil {
		t.Fatal(err)
	}
	base := "/v1/restaurants/" + restA + "/events"
	r, p := e.feed(base, allScopes)
	if r.status != 200 || len(p.Events) != 1 || p.Events[0].ID != kept.ID || p.NextAfter != 3 || p.OldestSeq != 3 {
		t.Fatalf("no after: %d %s", r.status, r.body)
	}
	if r, _ := e.feed(base+"?after=0", allScopes); r.status != 410 {
		t.Fatalf("after=0 below the kept range: %d %s", r.status, r.body)
	}
}

// The types parameter is 1 to 1,000 characters, as the document says.
func TestFeedTypesWithinTheDocumentedLength(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := "/v1/restaurants/" + restA + "/events?types="
	long := strings.Repeat("order.created,", 72)[:1001]
	for _, types := range []string{"", long} {
		if r, _ := e.feed(base+types, allScopes); r.status != 400 {
			t.Fatalf("types of %d characters: %d %s", len(types), r.status, r.body)
		}
	}
	if r, _ := e.feed(base+"order.*", allScopes); r.status != 200 {
		t.Fatalf("types=order.*: %d %s", r.status, r.body)
	}
}

// eventTypes are uniqueItems: a repeated type is refused, not merged.
func TestWebhookEventTypesRepeatedAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := "/v1/restaurants/" + restA + "/webhook-endpoints"
	r := e.call("POST", base, "client-1", manage, map[string]any{"url": "http://127.0.0.1:9/hooks",
		"eventTypes": []string{"order.created", "order.created"}, "idempotencyKey": "21111111-1111-4111-8111-111111111111"})
	if r.status != 400 || !strings.Contains(string(r.body), "more than once") {
		t.Fatalf("create with a repeated type: %d %s", r.status, r.body)
	}
	id := e.createEndpoint("http://127.0.0.1:9/hooks", "31111111-1111-4111-8111-111111111111")
	r = e.call("PATCH", base+"/"+id, "client-1", manage, map[string]any{"eventTypes": []string{"order.updated", "order.created", "order.updated"},
		"idempotencyKey": "41111111-1111-4111-8111-111111111111"})
	if r.status != 400 {
		t.Fatalf("update with a repeated type: %d %s", r.status, r.body)
	}
}

// A long poll without after waits from the head, like one given it.
func TestLongPollWithoutAfterWaitsForTheNextEvent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	got := make(chan feedPage, 1)
	go func() {
		_, p := e.feed("/v1/restaurants/"+restA+"/events?wait=30", allScopes)
		got <- p
	}()
	time.Sleep(100 * time.Millisecond)
	next := ev(restA, contracts.EventOrderCreated)
	e.appendOK(next)
	p := <-got
	if len(p.Events) != 1 || p.Events[0].ID != next.ID || p.NextAfter != 1 {
		t.Fatalf("%+v", p)
	}
}
