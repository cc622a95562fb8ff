package outbox_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"gorm.io/gorm"

	"partnerapi.dev/pkg/outbox"
)

// BenchmarkRecordOverhead measures what recording an event adds to a
// write: the same small transaction (take a row, update it, as a service's
// write does) alternately without and with outbox.Record of one event of
// the size of a menu or order event, and reports each p50 and their
// difference. Alternating keeps the comparison fair on a busy machine.
func BenchmarkRecordOverhead(b *testing.B) {
	db := openDB(b)
	data := []byte(`{"menu":{"id":"6f1c2b8e-5d0a-4c3e-9f7b-2a1d3c4e5f60","name":"Lunch","activeOnPos":false,"activeOnline":true,"categoryCount":12,"itemCount":180},"itemIds":["a1","a2"]}`)
	write := func(record bool, i int) error {
		return db.Gorm.Transaction(func(tx *gorm.DB) error {
			r := fmt.Sprintf("r%d", 1+i%5)
			var v int
			if err := tx.Raw(`SELECT v FROM versions WHERE restaurant = ? FOR UPDATE`, r).Scan(&v).Error; err != nil {
				return err
			}
			if err := tx.Exec(`UPDATE versions SET v = ? WHERE restaurant = ?`, v+1, r).Error; err != nil {
				return err
			}
			if !record {
				return nil
			}
			return outbox.Record(tx, outbox.Event{Type: "menu.updated", RestaurantID: r, Data: data})
		})
	}
	var without, with []time.Duration
	i := 0
	for b.Loop() {
		for _, record := range []bool{false, true} {
			t0 := time.Now()
			if err := write(record, i); err != nil {
				b.Fatal(err)
			}
			if record {
				with = append(with, time.Since(t0))
			} else {
				without = append(without, time.Since(t0))
			}
		}
		i++
		// An outbox with no relay grows; keep it at the size a running
		// relay leaves it (near empty).
		if i%500 == 0 {
			if err := db.Gorm.Exec(`DELETE FROM outbox_events`).Error; err != nil {
				b.Fatal(err)
			}
		}
	}
	p50 := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	a, c := p50(without), p50(with)
	b.ReportMetric(a, "without-p50-ms")
	b.ReportMetric(c, "with-p50-ms")
	b.ReportMetric(c-a, "overhead-p50-ms")
}
