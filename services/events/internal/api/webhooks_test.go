package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/contracts"
)

var manage = []string{contracts.ScopeRestaurantRead, contracts.ScopeOrdersRead, contracts.ScopeWebhooksManage}

// endpoints is restaurant restA's webhook endpoints collection.
const endpoints = "/v1/restaurants/" + restA + "/webhook-endpoints"

// createEndpoint creates an endpoint of client-1 on restA for url and
// order.created, under idempotency key key, and returns its id.
func (e *env) createEndpoint(url, key string) string {
	e.t.Helper()
	r := e.call("POST", endpoints, "client-1", manage, createBody{URL: url, EventTypes: []string{"order.created"}, IdempotencyKey: key})
	if r.status != 201 {
		e.t.Fatalf("create %s: %d %s", url, r.status, r.body)
	}
	return data[endpointAnswer](e.t, r).Endpoint.ID
}

// call sends a webhook management request as client on restaurant restA
// with scopes and checks the answer against the OpenAPI document.
func (e *env) call(method, path, client string, scopes []string, body any) response {
	e.t.Helper()
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	return e.callRaw(e.t, method, path, client, scopes, raw)
}

// callRaw is call with the body as bytes (none when nil), checked on t.
func (e *env) callRaw(t testing.TB, method, path, client string, scopes []string, body []byte) response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	ten := strings.Split(strings.TrimPrefix(path, "/v1/restaurants/"), "/")[0]
	req.Header.Set(internalctx.Header, e.keys.Sign(internalctx.Context{ClientID: client, UserID: "u", GrantID: "g-" + client,
		Scopes: scopes, Tenant: &internalctx.Tenant{ID: ten, TimeZone: "Europe/Helsinki", DayStartHour: 4, Currency: "EUR", Country: "FI"}, RequestID: "req-1"}))
	resp, err := e.app.Test(req, 30_000)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	u, _ := url.Parse(path)
	h := resp.Header.Clone()
	h.Set("RateLimit-Policy", `"partner";q=60;w=60`)
	apispec.ValidateResponse(t, method, u.Path, u.Query(), resp.StatusCode, h, raw)
	return response{resp.StatusCode, raw}
}

func TestWebhookEndpointManagement(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := "/v1/restaurants/" + restA + "/webhook-endpoints"
	create := createBody{URL: "http://127.0.0.1:9/hooks", EventTypes: []string{"order.created", "order.updated"},
		IdempotencyKey: "11111111-1111-4111-8111-111111111111"}

	r := e.call("POST", base, "client-1", manage, create)
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	created := data[endpointAnswer](t, r)
	id, secret := created.Endpoint.ID, created.Secret
	if !strings.HasPrefix(secret, "whsec_") || created.Replayed {
		t.Fatalf("create answer %s", r.body)
	}
	// The same key and body: the same answer, replayed; another body: 409.
	if r := e.call("POST", base, "client-1", manage, create); r.status != 201 || !data[endpointAnswer](t, r).Replayed ||
		data[endpointAnswer](t, r).Endpoint.ID != id {
		t.Fatalf("replay: %d %s", r.status, r.body)
	}
	other := createBody{URL: "http://127.0.0.1:9/other", EventTypes: []string{"order.created"}, IdempotencyKey: create.IdempotencyKey}
	if r := e.call("POST", base, "client-1", manage, other); r.status != 409 {
		t.Fatalf("key reused with another body: %d %s", r.status, r.body)
	}

	for _, c := range []struct {
		name   string
		scopes []string
		body   map[string]any
		status int
	}{
		{"http on a public host", manage, map[string]any{"url": "http://example.com/h", "eventTypes": []string{"order.created"}}, 400},
		{"not a URL", manage, map[string]any{"url": "example.com/h", "eventTypes": []string{"order.created"}}, 400},
		{"credentials in the URL", manage, map[string]any{"url": "https://u:p@example.com/h", "eventTypes": []string{"order.created"}}, 400},
		{"a type the grant cannot read", manage, map[string]any{"url": "https://example.com/h", "eventTypes": []string{"menu.created"}}, 400},
		{"an unknown type", manage, map[string]any{"url": "https://example.com/h", "eventTypes": []string{"order.deleted"}}, 400},
		{"no types", manage, map[string]any{"url": "https://example.com/h", "eventTypes": []string{}}, 400},
		{"without the manage scope", ordersOnly, map[string]any{"url": "https://example.com/h", "eventTypes": []string{"order.created"}}, 404},
		{"an unknown field", manage, map[string]any{"url": "https://example.com/h", "eventTypes": []string{"order.created"}, "secret": "x"}, 400},
	} {
		c.body["idempotencyKey"] = "22222222-2222-4222-8222-22222222222" + string(rune('0'+len(c.name)%10))
		if r := e.call("POST", base, "client-1", c.scopes, c.body); r.status != c.status {
			t.Errorf("%s: %d %s", c.name, r.status, r.body)
		}
	}

	// The list never shows the secret; another client sees nothing.
	r = e.call("GET", base, "client-1", manage, nil)
	if r.status != 200 || strings.Contains(string(r.body), secret) || !strings.Contains(string(r.body), id) {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	if r := e.call("GET", base+"?organization_id=0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a09", "client-1", manage, nil); r.status != 200 || !strings.Contains(string(r.body), id) {
		t.Fatalf("list with organization_id: %d %s", r.status, r.body)
	}
	if r := e.call("GET", base+"?limit=5", "client-1", manage, nil); r.status != 400 {
		t.Fatalf("list with an unknown parameter: %d", r.status)
	}
	if r := e.call("GET", base, "client-2", manage, nil); r.status != 200 || string(r.body) != `{"data":[]}` {
		t.Fatalf("another client's list: %s", r.body)
	}
	if r := e.call("PATCH", base+"/"+id, "client-2", manage, map[string]any{"disabled": true, "idempotencyKey": "33333333-3333-4333-8333-333333333333"}); r.status != 404 {
		t.Fatalf("another client's update: %d", r.status)
	}

	// Disabled: no test event; enabled again: the test event is queued.
	if r := e.call("PATCH", base+"/"+id, "client-1", manage, map[string]any{"disabled": true, "idempotencyKey": "44444444-4444-4444-8444-444444444444"}); r.status != 200 ||
		!data[endpointAnswer](t, r).Endpoint.Disabled {
		t.Fatalf("disable: %d %s", r.status, r.body)
	}
	if r := e.call("POST", base+"/"+id+"/test", "client-1", manage, keyed{IdempotencyKey: "55555555-5555-4555-8555-555555555555"}); r.status != 409 {
		t.Fatalf("test event to a disabled endpoint: %d %s", r.status, r.body)
	}
	if r := e.call("PATCH", base+"/"+id, "client-1", manage, map[string]any{"disabled": false, "idempotencyKey": "66666666-6666-4666-8666-666666666666"}); r.status != 200 {
		t.Fatalf("enable: %d %s", r.status, r.body)
	}
	r = e.call("POST", base+"/"+id+"/test", "client-1", manage, keyed{IdempotencyKey: "77777777-7777-4777-8777-777777777777"})
	if r.status != 202 {
		t.Fatalf("test event: %d %s", r.status, r.body)
	}
	testDelivery := data[deliveryAnswer](t, r).Delivery
	if testDelivery.EventType != "webhook.test" || testDelivery.Seq != 0 || testDelivery.Status != "pending" {
		t.Fatalf("test delivery %s", r.body)
	}

	// An appended event is queued for the endpoint in the append's
	// transaction; one of another type is not.
	e.appendOK(ev(restA, contracts.EventOrderCreated), ev(restA, contracts.EventOrderRefunded))
	r = e.call("GET", base+"/"+id+"/deliveries?limit=1", "client-1", manage, nil)
	page := data[deliveriesPage](t, r)
	ds := page.Deliveries
	if r.status != 200 || len(ds) != 1 || ds[0].EventType != "order.created" || page.NextBefore == nil {
		t.Fatalf("deliveries page 1: %d %s", r.status, r.body)
	}
	r = e.call("GET", base+"/"+id+"/deliveries?before="+*page.NextBefore, "client-1", manage, nil)
	if page := data[deliveriesPage](t, r); len(page.Deliveries) != 1 || page.Deliveries[0].ID != testDelivery.ID || page.NextBefore != nil {
		t.Fatalf("deliveries page 2: %s", r.body)
	}
	if r := e.call("GET", base+"/"+id+"/deliveries?cursor=1", "client-1", manage, nil); r.status != 400 {
		t.Fatalf("unknown parameter: %d", r.status)
	}

	// Retry, replay.
	if r := e.call("POST", base+"/"+id+"/deliveries/"+testDelivery.ID+"/retry", "client-1", manage,
		keyed{IdempotencyKey: "88888888-8888-4888-8888-888888888888"}); r.status != 202 {
		t.Fatalf("retry: %d %s", r.status, r.body)
	}
	if r := e.call("POST", base+"/"+id+"/deliveries/999999/retry", "client-1", manage,
		keyed{IdempotencyKey: "99999999-9999-4999-8999-999999999999"}); r.status != 404 {
		t.Fatalf("retry of an unknown delivery: %d", r.status)
	}
	r = e.call("POST", base+"/"+id+"/replay", "client-1", manage, map[string]any{"afterSeq": 0, "idempotencyKey": "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"})
	if a := data[replayAnswer](t, r); r.status != 202 || a.Enqueued != 1 || a.LastSeq != 1 {
		t.Fatalf("replay: %d %s", r.status, r.body)
	}
	if r := e.call("POST", base+"/"+id+"/replay", "client-1", manage, map[string]any{"idempotencyKey": "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"}); r.status != 400 {
		t.Fatalf("replay from nowhere: %d", r.status)
	}

	// Rotation: a new secret, the previous one signing until the grace ends.
	r = e.call("POST", base+"/"+id+"/rotate-secret", "client-1", manage, keyed{IdempotencyKey: "cccccccc-cccc-4ccc-8ccc-cccccccccccc"})
	if a := data[endpointAnswer](t, r); r.status != 200 || a.Secret == secret || a.Endpoint.PreviousSecretExpiresAt == nil {
		t.Fatalf("rotate: %d %s", r.status, r.body)
	}

	// Delete: gone from the list, and then unknown.
	if r := e.call("DELETE", base+"/"+id, "client-1", manage, keyed{IdempotencyKey: "dddddddd-dddd-4ddd-8ddd-dddddddddddd"}); r.status != 200 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r := e.call("GET", base, "client-1", manage, nil); string(r.body) != `{"data":[]}` {
		t.Fatalf("list after delete: %s", r.body)
	}
	if r := e.call("GET", base+"/"+id+"/deliveries", "client-1", manage, nil); r.status != 404 {
		t.Fatalf("deliveries of a deleted endpoint: %d", r.status)
	}
	if r := e.call("GET", base+"/not-a-uuid/deliveries", "client-1", manage, nil); r.status != 404 {
		t.Fatalf("not a uuid: %d", r.status)
	}
}
