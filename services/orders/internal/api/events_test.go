package api_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"partnerapi.dev/pkg/servicetest"
)

// event is an order event: the order as search shows it.
type event struct {
	Type, RestaurantID string
	Data               orderSummary
}

// takeEvents returns the events recorded since the last call, in order,
// and removes them (as the relay does once they are acknowledged); data
// with a field orderSummary does not declare fails the test.
func (e *env) takeEvents() []event {
	e.t.Helper()
	var rows []struct{ Type, RestaurantID, Data string }
	if err := e.db.Gorm.Raw(`WITH d AS (DELETE FROM outbox_events RETURNING pos, type, restaurant_id, data::text)
SELECT type, restaurant_id, data FROM d ORDER BY pos`).Scan(&rows).Error; err != nil {
		e.t.Fatal(err)
	}
	out := make([]event, len(rows))
	for i, r := range rows {
		out[i] = event{Type: r.Type, RestaurantID: r.RestaurantID, Data: servicetest.Strict[orderSummary](e.t, []byte(r.Data))}
	}
	return out
}

// The ingestion endpoint records one event per changed order in the
// request's transaction, carrying the order as search shows it; an order
// sent again unchanged, or a refused request, records nothing.
func TestIngestionRecordsOrderEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o1 := order(helsinki, "o1", hel(2026, 3, 10, 12, 0))
	o2 := order(helsinki, "o2", hel(2026, 3, 10, 13, 0))
	types := func(step string, want ...string) []event {
		t.Helper()
		got := e.takeEvents()
		var names []string
		for _, g := range got {
			if g.RestaurantID != helsinki {
				t.Fatalf("%s: event for %s", step, g.RestaurantID)
			}
			names = append(names, g.Type+":"+g.Data.OrderID)
		}
		if !reflect.DeepEqual(names, want) {
			t.Fatalf("%s: recorded %v, want %v", step, names, want)
		}
		return got
	}
	e.ingest(o1, o2)
	got := types("new orders", "order.created:o1", "order.created:o2")
	page := servicetest.Must[struct {
		Matches []json.RawMessage `json:"matches"`
	}](e.Client, http.StatusOK, http.MethodGet, "/v1/restaurants/"+helsinki+"/orders?limit=10", helsinki, nil)
	compared := 0
	for _, raw := range page.Matches {
		m := servicetest.Strict[orderSummary](t, raw)
		if m.OrderID != "o1" {
			continue
		}
		compared++
		if !reflect.DeepEqual(m, got[0].Data) {
			t.Fatalf("event data %+v, search shows %s", got[0].Data, raw)
		}
	}
	if compared != 1 {
		t.Fatalf("o1 not found in search: %s", page.Matches)
	}

	e.ingest(o1, o2)
	types("the same orders again")

	refunded := order(helsinki, "o1", hel(2026, 3, 10, 12, 0), set("restaurantOrderNumber", o1["restaurantOrderNumber"]),
		set("status", "partially_refunded"), set("refundAmountMinor", 800))
	o2["tableNumber"] = 9
	e.ingest(refunded, o2)
	types("refund and a change", "order.refunded:o1", "order.updated:o2")

	status, _ := e.ingestRaw(ndjson(order(helsinki, "o3", hel(2026, 3, 10, 14, 0))) + "{\"orderId\":\n")
	if status != http.StatusBadRequest {
		t.Fatalf("bad body: %d", status)
	}
	types("refused request")
}
