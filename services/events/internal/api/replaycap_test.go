package api_test

import (
	"testing"

	"partnerapi.dev/services/contracts"
)

// A replay fills an endpoint's queue up to 10,000 waiting deliveries and
// no further: the next one is 409 until they are sent.
func TestReplayIsBoundedByTheEndpointsQueue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := endpoints
	id := e.createEndpoint("http://127.0.0.1:9/hooks", "81111111-1111-4111-8111-111111111111")
	// 9,995 events, each queued for the endpoint (no worker runs here).
	for left := 9995; left > 0; left -= 500 {
		var batch []contracts.EventRecord
		for range min(500, left) {
			batch = append(batch, ev(restA, contracts.EventOrderCreated))
		}
		e.appendOK(batch...)
	}
	r := e.call("POST", base+"/"+id+"/replay", "client-1", manage, map[string]any{"afterSeq": 0, "idempotencyKey": "91111111-1111-4111-8111-111111111111"})
	if a := data[replayAnswer](t, r); r.status != 202 || a.Enqueued != 5 || a.LastSeq != 5 || !a.HasMore {
		t.Fatalf("replay into a queue of 9,995: %d %s", r.status, r.body)
	}
	r = e.call("POST", base+"/"+id+"/replay", "client-1", manage, map[string]any{"afterSeq": 5, "idempotencyKey": "a1111111-1111-4111-8111-111111111111"})
	if r.status != 409 {
		t.Fatalf("replay into a full queue: %d %s", r.status, r.body)
	}
}
