package api_test

import (
	"context"
	"strings"
	"testing"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/servicetest"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/events/internal/api"
	"partnerapi.dev/services/events/internal/store"
)

// With the database unreachable, the feed answers 503 service_unavailable
// (a long poll too, at once) and an append 503 capability_disabled, with no
// internals in the body; webhook endpoint reads and writes the same.
func TestDatabaseUnavailable(t *testing.T) {
	ctx := context.Background()
	db, err := database.Open(ctx, database.Config{URL: config.Secret("postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")}, "events")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	keys := servicetest.Keys(t)
	st := &store.Store{DB: db.Gorm}
	h := &api.Handlers{Repo: st, Webhooks: st, Notify: &store.Listener{}, Keys: keys, Token: token}
	e := &env{t: t, app: h.App(nil), keys: keys}
	for _, q := range []string{"", "?wait=5"} {
		r, _ := e.feed("/v1/restaurants/"+restA+"/events"+q, allScopes)
		if r.status != 503 || decode[httpx.Envelope](t, r).Error != "service_unavailable" {
			t.Fatalf("feed%s: %d %s", q, r.status, r.body)
		}
	}
	r := e.appendRaw(token, contracts.EventAppend{Source: "orders", Events: []contracts.EventRecord{ev(restA, contracts.EventOrderCreated)}})
	if r.status != 503 || decode[httpx.Envelope](t, r).Error != "capability_disabled" || strings.Contains(string(r.body), "127.0.0.1") {
		t.Fatalf("append: %d %s", r.status, r.body)
	}
	base := "/v1/restaurants/" + restA + "/webhook-endpoints"
	r = e.call("GET", base, "client-1", manage, nil)
	if r.status != 503 || decode[httpx.Envelope](t, r).Error != "service_unavailable" {
		t.Fatalf("list endpoints: %d %s", r.status, r.body)
	}
	r = e.call("POST", base, "client-1", manage, createBody{URL: "https://example.com/h", EventTypes: []string{"order.created"},
		IdempotencyKey: "11111111-1111-4111-8111-111111111111"})
	if r.status != 503 || decode[httpx.Envelope](t, r).Error != "capability_disabled" || strings.Contains(string(r.body), "127.0.0.1") {
		t.Fatalf("create endpoint: %d %s", r.status, r.body)
	}
}
