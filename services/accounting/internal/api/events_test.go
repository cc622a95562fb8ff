package api_test

import (
	"encoding/json"
	"partnerapi.dev/pkg/servicetest"
	"reflect"
	"testing"
)

type event struct {
	Type, RestaurantID string
	Data               json.RawMessage
}

// takeEvents returns the events recorded since the last call in their
// order and removes them, as the relay does once they are acknowledged.
func (e *env) takeEvents() []event {
	e.t.Helper()
	var rows []struct {
		Type, RestaurantID, Data string
	}
	if err := e.db.Gorm.Raw(`WITH d AS (DELETE FROM outbox_events RETURNING pos, type, restaurant_id, data::text)
SELECT type, restaurant_id, data FROM d ORDER BY pos`).Scan(&rows).Error; err != nil {
		e.t.Fatal(err)
	}
	out := make([]event, len(rows))
	for i, r := range rows {
		if !json.Valid([]byte(r.Data)) {
			e.t.Fatalf("event data is not JSON: %s", r.Data)
		}
		out[i] = event{Type: r.Type, RestaurantID: r.RestaurantID, Data: json.RawMessage(r.Data)}
	}
	return out
}

func (e *env) wantEvents(step string, types ...string) []event {
	e.t.Helper()
	got := e.takeEvents()
	names := make([]string, len(got))
	for i, g := range got {
		names[i] = g.Type
		if g.RestaurantID != helsinki {
			e.t.Fatalf("%s: event for restaurant %s", step, g.RestaurantID)
		}
	}
	if len(types) == 0 {
		types = []string{}
	}
	if !reflect.DeepEqual(names, types) {
		e.t.Fatalf("%s: recorded %v, want %v", step, names, types)
	}
	return got
}

// Each write records exactly its events, in the write's transaction: a new
// refund event as the refunds page shows it; an apply and an undo with the
// result's ids; nothing for a replay, a known refund, a rejected write.
func TestWritesRecordEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	correctionDay(e)
	e.wantEvents("sources only")

	e.ingest(refund(helsinki, "rf-1", "refund", "o-1", 500, hel(2026, 7, 2, 12, 0)))
	got := e.wantEvents("new refund", "refund_event.recorded")
	page := mustGet[struct {
		Events []json.RawMessage `json:"events"`
	}](e, base(helsinki)+"/refunds?start_date=2026-07-01&end_date=2026-07-31", helsinki).Events
	if len(page) != 1 || !reflect.DeepEqual(servicetest.Strict[refundEvent](t, page[0]), servicetest.Strict[refundEvent](t, got[0].Data)) {
		t.Fatalf("event data %s, refunds page shows %s", got[0].Data, page)
	}
	e.ingest(refund(helsinki, "rf-1", "refund", "o-1", 500, hel(2026, 7, 2, 12, 0)))
	e.wantEvents("same refund again")
	e.ingest(refund(helsinki, "rf-1", "refund", "o-1", 600, hel(2026, 7, 2, 12, 0)))
	e.wantEvents("known refund changed")
	if status, _ := e.ingestRaw(ndjson(refund(helsinki, "rf-2", "refund", "o-2", 100, hel(2026, 7, 2, 13, 0))) + "{\"type\":\"nonsense\"}\n"); status != 400 {
		t.Fatalf("bad batch: %d", status)
	}
	e.wantEvents("rejected batch")

	r := base(helsinki)
	pv := mustPost[preview](e, r+"/payment-corrections/preview", helsinki, previewBody("correct", "cash"))
	key := "6f1c1f4e-1111-4a4a-8b8b-000000000001"
	res := mustPost[result](e, r+"/payment-corrections/apply", helsinki, writeBody(pv, key))
	got = e.wantEvents("apply", "payment_correction.applied")
	want := correctionEvent{RestaurantID: helsinki, BatchID: res.BatchID, RevisionID: res.RevisionID,
		BusinessDate: "2026-07-01", SourceKind: "order", SourceRecordID: "o-1"}
	if ev := servicetest.Strict[correctionEvent](t, got[0].Data); ev != want {
		t.Fatalf("apply event %+v, want %+v", ev, want)
	}
	post[json.RawMessage](e, r+"/payment-corrections/apply", helsinki, writeBody(pv, key))
	e.wantEvents("replay")
	if a := e.refusal(r+"/payment-corrections/apply", helsinki, writeBody(pv, "6f1c1f4e-1111-4a4a-8b8b-000000000002")); a.Status != 409 {
		t.Fatalf("stale apply: %d", a.Status)
	}
	e.wantEvents("stale apply")
	up := mustPost[preview](e, r+"/payment-corrections/preview", helsinki, previewBody("undo", nil))
	undone := mustPost[result](e, r+"/payment-corrections/undo", helsinki, writeBody(up, "6f1c1f4e-1111-4a4a-8b8b-000000000003"))
	got = e.wantEvents("undo", "payment_correction.undone")
	if ev := servicetest.Strict[correctionEvent](t, got[0].Data); ev.BatchID != undone.BatchID {
		t.Fatalf("undo event %s", got[0].Data)
	}
}
