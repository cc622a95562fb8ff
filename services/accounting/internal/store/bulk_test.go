package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/accounting/internal/domain"
	"partnerapi.dev/services/accounting/internal/store"
	"partnerapi.dev/services/accounting/migrations"
)

const bulkRestaurant = "29db7f54-6f7c-48ea-964c-b99e91c78552"

func openStore(t *testing.T) *store.Store {
	t.Helper()
	ctx := context.Background()
	url := testenv.NewDatabase(t, "accounting-bulk", database.MigrateURL("accounting", migrations.FS, migrations.Go()...))
	db, err := database.Open(ctx, database.Config{URL: config.Secret(url)}, "accounting")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(ctx) })
	return &store.Store{DB: db.Gorm}
}

func sourceLine(id, at, method string, gross int64) string {
	return fmt.Sprintf(`{"type":"payment_source","restaurantId":%q,"timeZone":"Europe/Helsinki","dayStartHour":4,"currency":"EUR","paymentSource":{"sourceKind":"order","sourceRecordId":%q,"receiptHash":"r-%s","orderIds":[%q],"occurredAt":%q,"methodKey":%q,"grossMinor":%d,"vatMinor":0,"transactionCount":1,"vatEvidence":"known","grossByRateMinor":{"zero":%d,"special":0,"reduced":0,"standard":0,"unknown":0},"vatByRateMinor":{"zero":0,"special":0,"reduced":0,"standard":0,"unknown":0},"discountMinor":0,"tipMinor":0}}`,
		bulkRestaurant, id, id, id, at, method, gross, gross)
}

func refundLine(id string, amount int64) string {
	return fmt.Sprintf(`{"type":"refund_event","restaurantId":%q,"timeZone":"Europe/Helsinki","dayStartHour":4,"currency":"EUR","refundEvent":{"refundId":%q,"kind":"refund","occurredAt":"2026-07-22T14:02:30Z","orderId":"o1","originalBusinessDate":"2026-07-20","methodKey":"card","amountMinor":%d,"returnedLines":[],"accountingImpact":{"grossMinor":%d,"netMinor":%d,"vatMinor":0,"vatByRateMinor":{"zero":0,"special":0,"reduced":0,"standard":0,"unknown":0}},"legacyTiming":false}}`,
		bulkRestaurant, id, amount, -amount, -amount)
}

func parse(t *testing.T, lines ...string) domain.Batch {
	t.Helper()
	b, err := domain.ParseBatch(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// state is everything an ingestion writes, as text, for comparisons.
func state(t *testing.T, st *store.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, q := range map[string]string{
		"sources": `SELECT string_agg(concat_ws(',', source_kind, source_record_id, business_date, method_key, gross_minor, fingerprint), ';' ORDER BY source_record_id) FROM payment_sources`,
		"totals":  `SELECT string_agg(t::text, ';' ORDER BY t::text) FROM daily_method_totals t`,
		"days":    `SELECT string_agg(t::text, ';' ORDER BY t::text) FROM daily_source_state t`,
		"refunds": `SELECT string_agg(concat_ws(',', refund_id, amount_minor, fingerprint), ';' ORDER BY refund_id) FROM refund_events`,
		"events":  `SELECT string_agg(type || ':' || (data->>'refundId') || ':' || (data->>'amountMinor'), ';' ORDER BY pos) FROM outbox_events`,
	} {
		var v *string
		if err := st.DB.Raw(q).Scan(&v).Error; err != nil {
			t.Fatal(err)
		}
		if v != nil {
			out[name] = *v
		}
	}
	return out
}

// TestBulkIngestMatchesIngest loads the same records through the import's
// bulk path and the request path: the stored rows, day totals and events
// are the same, loading again changes nothing, a changed source moves its
// day totals, and a bad batch stores nothing.
func TestBulkIngestMatchesIngest(t *testing.T) {
	ctx := context.Background()
	first := []string{
		sourceLine("a", "2026-07-19T08:00:00Z", "card", 1000),
		sourceLine("b", "2026-07-19T09:00:00Z", "cash", 500),
		refundLine("r1", 100),
		sourceLine("c", "2026-07-20T09:00:00Z", "card", 700),
		refundLine("r2", 200),
		refundLine("r1", 150),                                // sent again in the same load: the last line wins, one event
		sourceLine("b", "2026-07-18T10:00:00Z", "card", 600), // b again, on another day: this line wins
	}
	// The second load moves "c" to another day and method and sends "a"
	// unchanged, r2 changed and a new refund.
	second := []string{
		sourceLine("a", "2026-07-19T08:00:00Z", "card", 1000),
		sourceLine("c", "2026-07-21T09:00:00Z", "cash", 800),
		refundLine("r2", 250),
		refundLine("r3", 300),
	}

	byRequest := openStore(t)
	for _, lines := range [][]string{first, second} {
		if err := byRequest.Ingest(ctx, parse(t, lines...)); err != nil {
			t.Fatal(err)
		}
	}
	bulk := openStore(t)
	for _, lines := range [][]string{first, second} {
		// Two batches per load, as the import hands them over.
		if err := bulk.BulkIngest(ctx, func(add func(domain.Batch) error) error {
			if err := add(parse(t, lines[:2]...)); err != nil {
				return err
			}
			return add(parse(t, lines[2:]...))
		}); err != nil {
			t.Fatal(err)
		}
	}
	want, got := state(t, byRequest), state(t, bulk)
	for _, k := range []string{"sources", "totals", "days", "refunds", "events"} {
		if want[k] != got[k] || got[k] == "" {
			t.Errorf("%s:\n bulk    %s\n request %s", k, got[k], want[k])
		}
	}
	if !strings.Contains(got["days"], "2026-07-20,0,0,") {
		t.Errorf("the day c left keeps an empty state row: %s", got["days"])
	}

	// Loading the second file again changes nothing and records nothing.
	if err := bulk.BulkIngest(ctx, func(add func(domain.Batch) error) error { return add(parse(t, second...)) }); err != nil {
		t.Fatal(err)
	}
	if again := state(t, bulk); fmt.Sprint(again) != fmt.Sprint(got) {
		t.Errorf("a repeated load changed the state:\n%v\n%v", again, got)
	}

	// A failing batch after a good one stores nothing of either.
	err := bulk.BulkIngest(ctx, func(add func(domain.Batch) error) error {
		if err := add(parse(t, sourceLine("d", "2026-07-22T09:00:00Z", "card", 900), refundLine("r4", 10))); err != nil {
			return err
		}
		_, err := domain.ParseLines(strings.NewReader(`{"type":"payment_source"}`), 3)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "line 3: field restaurantId") {
		t.Fatalf("bad line: %v", err)
	}
	if after := state(t, bulk); fmt.Sprint(after) != fmt.Sprint(got) {
		t.Errorf("a failed load stored something:\n%v\n%v", after, got)
	}
}
