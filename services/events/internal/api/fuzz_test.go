package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"partnerapi.dev/pkg/servicetest"
)

// FuzzWriteBodies sends every partner write of the events service (the
// webhook endpoint operations), against a real database, with arbitrary
// text in one string of a valid body or an arbitrary body
// (servicetest.FuzzWriteBodies): never a 5xx, always the envelope, no
// internals, no quoted input. make fuzz runs it.
func FuzzWriteBodies(f *testing.F) {
	e := newEnv(f)
	writes := webhookWrites(e)
	servicetest.FuzzWriteBodies(f, writes, func(t *testing.T, method, path string, body []byte) (int, []byte) {
		r := e.callRaw(t, method, path, "client-1", manage, body)
		return r.status, r.body
	})
}

// TestWebhookWrongTypesAreNamed: a value of the wrong JSON type anywhere in
// a webhook write body is a 400 naming its path as the body spells it.
func TestWebhookWrongTypesAreNamed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	servicetest.CheckWrongTypes(t, webhookWrites(e), func(t *testing.T, method, path string, body []byte) (int, []byte) {
		r := e.callRaw(t, method, path, "client-1", manage, body)
		return r.status, r.body
	})
}

// webhookWrites are the webhook endpoint writes with valid bodies: on one
// endpoint, and a delete on another so the first stays.
func webhookWrites(e *env) []servicetest.Write {
	t := e.t
	base := endpoints
	ep := base + "/" + e.createEndpoint("http://127.0.0.1:9/hooks", "21111111-1111-4111-8111-111111111111")
	gone := base + "/" + e.createEndpoint("http://127.0.0.1:9/hooks", "21111111-1111-4111-8111-111111111112")
	r := e.call(http.MethodPost, ep+"/test", "client-1", manage, keyed{IdempotencyKey: "21111111-1111-4111-8111-111111111113"})
	if r.status != http.StatusAccepted {
		t.Fatalf("test event: %d %s", r.status, r.body)
	}
	delivery := data[deliveryAnswer](t, r).Delivery.ID
	return []servicetest.Write{
		{Method: http.MethodPost, Path: base, Body: `{"url":"http://127.0.0.1:9/hooks","eventTypes":["order.created","menu.published"],"idempotencyKey":"{KEY}"}`},
		{Method: http.MethodPatch, Path: ep, Body: `{"url":"http://127.0.0.1:9/other","eventTypes":["order.updated"],"disabled":false,"idempotencyKey":"{KEY}"}`},
		{Method: http.MethodPost, Path: ep + "/rotate-secret", Body: `{"gracePeriodSeconds":3600,"idempotencyKey":"{KEY}"}`},
		{Method: http.MethodPost, Path: ep + "/test", Body: `{"idempotencyKey":"{KEY}"}`},
		{Method: http.MethodPost, Path: ep + "/replay", Body: `{"since":"2026-11-01T00:00:00Z","idempotencyKey":"{KEY}"}`},
		{Method: http.MethodPost, Path: fmt.Sprintf("%s/deliveries/%v/retry", ep, delivery), Body: `{"idempotencyKey":"{KEY}"}`},
		{Method: http.MethodDelete, Path: gone, Body: `{"idempotencyKey":"{KEY}"}`},
	}
}
