package api_test

import (
	"fmt"
	"net/http"
	"reflect"
	"testing"

	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/contracts"
)

// TestConcurrentIngestionEventsMatchTheOrders sends different states of one
// order (its first state, a change, a refund) in ingestion requests released
// together, round after round, and checks the event log against what was
// stored: exactly one order.created (none when the order was stored before
// the race, as in every other round, where the first state is sent again),
// every later event a change from the
// one before it (order.refunded exactly when the refund grew), and the last
// event is the order as search shows it. RACE_ROUNDS=<n> runs longer.
func TestConcurrentIngestionEventsMatchTheOrders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	at := hel(2026, 3, 10, 12, 0)
	for round := range testenv.Rounds(t, 10) {
		id := fmt.Sprintf("race-%d", round)
		first := order(helsinki, id, at)
		changed := order(helsinki, id, at, set("restaurantOrderNumber", first["restaurantOrderNumber"]), set("tableNumber", 9))
		refunded := order(helsinki, id, at, set("restaurantOrderNumber", first["restaurantOrderNumber"]),
			set("status", "partially_refunded"), set("refundAmountMinor", 800))
		if round%2 == 1 {
			// Every other round the order is stored before the race, so
			// the first request sends the stored state again (as a
			// retrying POS does): it changes the order only when it
			// commits after another one.
			e.ingest(first)
			e.takeEvents()
		}
		bodies := []string{ndjson(first), ndjson(changed), ndjson(refunded)}
		statuses := make([]int, len(bodies))
		fns := make([]func(), len(bodies))
		for i, body := range bodies {
			fns[i] = func() { statuses[i], _ = e.ingestRaw(body) }
		}
		testenv.Together(fns...)
		for i, st := range statuses {
			if st != http.StatusOK {
				t.Fatalf("round %d: ingest %d answered %d", round, i, st)
			}
		}

		events := e.takeEvents()
		switch {
		case round%2 == 0 && (len(events) == 0 || events[0].Type != contracts.EventOrderCreated):
			t.Fatalf("round %d: events %v, want order.created first", round, types(events))
		case round%2 == 1 && len(events) == 0:
			t.Fatalf("round %d: the stored order changed and no event was recorded", round)
		case round%2 == 1 && events[0].Type == contracts.EventOrderCreated:
			t.Fatalf("round %d: events %v: a stored order was created again", round, types(events))
		}
		for i := 1; i < len(events); i++ {
			prev, cur := events[i-1].Data, events[i].Data
			want := contracts.EventOrderUpdated
			if cur.RefundAmountMinor > prev.RefundAmountMinor {
				want = contracts.EventOrderRefunded
			}
			switch {
			case reflect.DeepEqual(prev, cur):
				t.Fatalf("round %d: events %v: event %d records no change", round, types(events), i)
			case events[i].Type != want:
				t.Fatalf("round %d: events %v: event %d is %s, want %s", round, types(events), i, events[i].Type, want)
			}
		}
		a := e.details("/v1/restaurants/"+helsinki+"/orders/"+id, helsinki)
		if a.Status != http.StatusOK {
			t.Fatalf("round %d: details: %d %s", round, a.Status, a.Raw)
		}
		stored, last := a.Data.Order, events[len(events)-1].Data
		if stored.Status != last.Status || stored.RefundAmountMinor != last.RefundAmountMinor || !reflect.DeepEqual(stored.TableNumber, last.TableNumber) {
			t.Fatalf("round %d: events %v: the stored order's status, refund or table differs from the last event's: %s", round, types(events), a.Raw)
		}
	}
}

func types(events []event) []string {
	out := make([]string, len(events))
	for i, ev := range events {
		var table any
		if n := ev.Data.TableNumber; n != nil {
			table = *n
		}
		out[i] = ev.Type + fmt.Sprintf("(%v,%v,%v)", ev.Data.Status, table, ev.Data.RefundAmountMinor)
	}
	return out
}
