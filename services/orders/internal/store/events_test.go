package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/orders/internal/api"
	"partnerapi.dev/services/orders/internal/domain"
)

type recorded struct {
	Type, RestaurantID, OrderID, Status string
	RefundAmountMinor                   int64
}

// Every replace records, in its own transaction, one event per order it
// changes: created, refunded when the refund grew, updated otherwise; an
// order stored again unchanged, or a replace that fails, records nothing.
func TestReplaceRecordsOrderEvents(t *testing.T) {
	s := openStore(t)
	events := domain.OrderEvents{View: api.OrderEventData}.Decide
	ctx := context.Background()
	refunded := func(o domain.Order, amount int64) domain.Order { o.RefundAmountMinor = amount; return o }
	tooLong := sampleOrder(strings.Repeat("x", 300), "paid", "Tea")
	steps := []struct {
		name    string
		orders  []domain.Order
		wantErr bool
		want    []recorded
	}{
		{"new orders", []domain.Order{sampleOrder("a", "paid", "Soup"), sampleOrder("b", "paid", "Tea")}, false,
			[]recorded{{contracts.EventOrderCreated, rid, "a", "paid", 0}, {contracts.EventOrderCreated, rid, "b", "paid", 0}}},
		{"same state again", []domain.Order{sampleOrder("a", "paid", "Soup")}, false, nil},
		{"changed status and a new order", []domain.Order{sampleOrder("a", "voided", "Soup"), sampleOrder("c", "paid")}, false,
			[]recorded{{contracts.EventOrderUpdated, rid, "a", "voided", 0}, {contracts.EventOrderCreated, rid, "c", "paid", 0}}},
		{"refund grows", []domain.Order{refunded(sampleOrder("b", "paid", "Tea"), 300)}, false,
			[]recorded{{contracts.EventOrderRefunded, rid, "b", "paid", 300}}},
		{"refund shrinks", []domain.Order{refunded(sampleOrder("b", "paid", "Tea"), 100)}, false,
			[]recorded{{contracts.EventOrderUpdated, rid, "b", "paid", 100}}},
		{"a failing replace records nothing", []domain.Order{sampleOrder("e", "paid"), tooLong}, true, nil},
	}
	type row struct {
		pos int64
		rec recorded
	}
	// take removes the recorded events from the outbox and returns them.
	take := func(name string) []row {
		rows, err := s.DB.QueryContext(ctx, `DELETE FROM outbox_events RETURNING pos, id, type, restaurant_id, data`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var got []row
		for rows.Next() {
			var r row
			var id, data string
			if err := rows.Scan(&r.pos, &id, &r.rec.Type, &r.rec.RestaurantID, &data); err != nil {
				t.Fatal(err)
			}
			var v struct {
				OrderID           string `json:"orderId"`
				Status            string `json:"status"`
				RefundAmountMinor int64  `json:"refundAmountMinor"`
				Items             []any  `json:"items"`
			}
			if err := json.Unmarshal([]byte(data), &v); err != nil || !strings.HasPrefix(id, "evt_") || v.Items == nil {
				t.Fatalf("%s: event %s data %s: %v", name, id, data, err)
			}
			r.rec.OrderID, r.rec.Status, r.rec.RefundAmountMinor = v.OrderID, v.Status, v.RefundAmountMinor
			got = append(got, r)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, st := range steps {
		err := s.Replace(ctx, st.orders, events)
		if (err != nil) != st.wantErr {
			t.Fatalf("%s: err %v", st.name, err)
		}
		got := take(st.name)
		// DELETE … RETURNING has no order: sort by position.
		for i := range got {
			for j := i + 1; j < len(got); j++ {
				if got[j].pos < got[i].pos {
					got[i], got[j] = got[j], got[i]
				}
			}
		}
		if len(got) != len(st.want) {
			t.Fatalf("%s: recorded %+v, want %+v", st.name, got, st.want)
		}
		for i := range got {
			if got[i].rec != st.want[i] {
				t.Fatalf("%s: event %d is %+v, want %+v", st.name, i, got[i].rec, st.want[i])
			}
		}
	}
}

const rid = "00000000-0000-4000-8000-000000000001"

// BenchmarkReplaceBatch replaces an import batch (2,000 orders, each
// changed) with and without recording its events: the cost events add to
// an import into a schema that holds orders.
func BenchmarkReplaceBatch(b *testing.B) {
	for _, withEvents := range []bool{false, true} {
		name := "NoEvents"
		if withEvents {
			name = "Events"
		}
		b.Run(name, func(b *testing.B) {
			s := openStore(b)
			var events domain.Decide
			if withEvents {
				events = domain.OrderEvents{View: api.OrderEventData}.Decide
			}
			ctx := context.Background()
			batch := make([]domain.Order, 2000)
			for i := range batch {
				batch[i] = sampleOrder(fmt.Sprintf("o%05d", i), "paid", "Soup", "Cake", "Tea")
			}
			if err := s.Replace(ctx, batch, events); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for n := range b.N {
				status := []string{"refunded", "paid"}[n%2]
				for i := range batch {
					batch[i].Status = status
				}
				if err := s.Replace(ctx, batch, events); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "orders/s")
		})
	}
}
