package store_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"runtime"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/services/orders/internal/domain"
	"partnerapi.dev/services/orders/internal/store"
	"partnerapi.dev/services/orders/migrations"
)

// richOrder has every kind of child row, nulls and non-ASCII text.
func richOrder(t *testing.T, i int, status string) domain.Order {
	t.Helper()
	rid := []string{"00000000-0000-4000-8000-000000000001", "0B5A3C1E-8F51-4A0E-9B8E-1C1F0E6D2A01"}[i%2]
	raw := fmt.Sprintf(`{"restaurantId":%q,"timeZone":"America/New_York","dayStartHour":5,"currency":"USD","country":"US",`+
		`"orderId":"ord-%d","restaurantOrderNumber":%d,"receiptHash":"rh%d","occurredAt":"2026-11-0%dT04:3%d:00.123456789Z","orderType":"delivery",`+
		`"tableNumber":%s,"status":%q,"paymentMethod":"manual","orderOrigin":{"kind":"marketplace","provider":%s},`+
		`"originalAmountMinor":1200,"totalAmountMinor":%d,"vatMinor":98,"refundAmountMinor":0,"discountAmountMinor":0,"grossSalesMinor":1200,`+
		`"netSalesMinor":-5,"tipAmountMinor":7,"taxCountryCode":"US","taxRatesAsOf":"2009-06-01",`+
		`"lines":[{"lineId":"l1","catalogItemId":"c1","catalogItemKind":"menu_item","catalogCategoryId":"cc","menuId":"m","name":"Crème \"Brûlée\"\n",`+
		`"category":"Desserts","itemType":"food","quantity":2,"unitPriceMinor":600,"originalUnitPriceMinor":750,"grossAmountMinor":1200,"discountAmountMinor":0,`+
		`"vatAmountMinor":98,"taxEvidence":"snapshot","taxCountryCode":"US","taxRatesAsOf":"2009-06-01","vatRates":[{"category":"standard","rateBps":888,"vatAmountMinor":98}],`+
		`"selectedOptions":[{"optionId":null,"optionGroupId":"g","name":"Extra","quantity":1,"unitPriceMinor":0,"grossAmountMinor":0,"vatAmountMinor":0}]},`+
		`{"lineId":"l2","name":"crème brûlée","taxEvidence":"unknown","quantity":1}],`+
		`"vatRows":[{"category":"standard","rateBps":888,"grossAmountMinor":1200,"netAmountMinor":1102,"vatAmountMinor":98}],`+
		`"refundedItems":[{"lineId":null,"catalogItemId":null,"name":"Gift","quantity":1,"amountMinor":5,"refundedAt":"2026-11-09T10:00:00.5+02:00"}],`+
		`"paymentReferences":[{"provider":"wolt","receiptHash":null,"checkoutId":"chk","transactionId":null,"transactionCode":"000123","sessionId":null,`+
		`"recordedAmountMinor":1207,"currency":"USD","createdAt":"2026-11-01T00:00:00Z"}]}`,
		rid, i, i+1, i, 1+i%9, i%10, map[bool]string{true: "null", false: "12"}[i%3 == 0], status,
		map[bool]string{true: "null", false: `"wolt"`}[i%4 == 0], 1000+i)
	o, err := domain.ParseRecord([]byte(raw), nil)
	if err != nil {
		t.Fatal(err)
	}
	if i%5 == 0 {
		o.Lines, o.LineCount = nil, 0 // no line: empty item keys
	}
	return o
}

// fingerprint is every row of the schema's tables (without ingested_at)
// and every index and constraint definition.
func fingerprint(t *testing.T, s *store.Store) string {
	t.Helper()
	var out strings.Builder
	out.WriteString(tableRows(t, s))
	var defs string
	if err := s.DB.QueryRow(`SELECT string_agg(indexdef, E'\n' ORDER BY indexname) FROM pg_indexes WHERE schemaname = current_schema()`).Scan(&defs); err != nil {
		t.Fatal(err)
	}
	out.WriteString(defs + "\n")
	if err := s.DB.QueryRow(`SELECT string_agg(conname || ' ' || pg_get_constraintdef(oid), E'\n' ORDER BY conname)
		FROM pg_constraint WHERE connamespace = current_schema()::regnamespace`).Scan(&defs); err != nil {
		t.Fatal(err)
	}
	return out.String() + defs
}

// tableRows is every row of the schema's order tables (without ingested_at),
// those it has: the five child tables before migration 10, order_details
// after.
func tableRows(t *testing.T, s *store.Store) string {
	t.Helper()
	var out strings.Builder
	for _, table := range append(migrations.PartitionedTables, "order_details") {
		var exists bool
		if err := s.DB.QueryRow(`SELECT to_regclass($1) IS NOT NULL`, table).Scan(&exists); err != nil {
			t.Fatal(err)
		}
		if !exists {
			continue
		}
		var cols, rows string
		if err := s.DB.QueryRow(`SELECT string_agg(quote_ident(attname), ',' ORDER BY attnum) FROM pg_attribute
			WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND attname <> 'ingested_at'`, table).Scan(&cols); err != nil {
			t.Fatal(err)
		}
		q := fmt.Sprintf(`SELECT coalesce(string_agg(x::text, E'\n' ORDER BY x::text), '') FROM (SELECT (%s) AS x FROM %s) s`, cols, table)
		if err := s.DB.QueryRow(q).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "%s:\n%s\n", table, rows)
	}
	return out.String()
}

// A bulk load leaves exactly the rows, indexes and constraints the replacing
// path leaves, an order sent again included (its last state wins), whether
// its states go out in one COPY or in several.
func TestBulkLoadMatchesReplace(t *testing.T) {
	t.Run("batches gathered", func(t *testing.T) { testBulkLoadMatchesReplace(t) })
	t.Run("a COPY per batch", func(t *testing.T) {
		store.SetFlushBytes(t, 1)
		testBulkLoadMatchesReplace(t)
	})
}

func testBulkLoadMatchesReplace(t *testing.T) {
	ctx := context.Background()
	var batches [][]domain.Order
	for b := range 3 {
		var batch []domain.Order
		for i := range 20 {
			batch = append(batch, richOrder(t, b*20+i, "paid"))
		}
		batches = append(batches, batch)
	}
	again := richOrder(t, 7, "refunded") // batch 0's order 7, later
	again.Lines = again.Lines[:1]
	again.LineCount = 1
	batches[2] = append(batches[2], again)

	want := openStore(t)
	for _, b := range batches {
		if err := want.Replace(ctx, b, nil); err != nil {
			t.Fatal(err)
		}
	}
	got := openStore(t)
	err := got.BulkLoad(ctx, func(sink domain.BatchSink) error {
		for _, b := range batches {
			p, err := sink.Prepare(b)
			if err != nil {
				return err
			}
			if err := sink.Store(ctx, p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	w, g := fingerprint(t, want), fingerprint(t, got)
	if !strings.Contains(w, "ord-59") || !strings.Contains(w, "order_item_keys_pkey") || !strings.Contains(w, "PRIMARY KEY") {
		t.Fatalf("fingerprint misses rows or indexes:\n%s", w)
	}
	if w != g {
		t.Fatalf("bulk load differs:\n%s\nwant:\n%s", g, w)
	}
	o, err := got.Get(ctx, again.RestaurantID, again.OrderID)
	if err != nil || o.Status != "refunded" || len(o.Lines) != 1 {
		t.Fatalf("the later state did not win: %+v %v", o, err)
	}
	// The two restaurants' rows went into their own partitions (a COPY
	// into a partition refuses rows of another).
	var parts int
	if err := got.DB.QueryRow(`SELECT count(DISTINCT tableoid) FROM order_details`).Scan(&parts); err != nil || parts != 2 {
		t.Fatalf("the details are in %d partitions (%v), want 2", parts, err)
	}

	// Not empty any more: refused, nothing changed.
	called := false
	err = got.BulkLoad(ctx, func(domain.BatchSink) error { called = true; return nil })
	if !errors.Is(err, store.ErrNotEmpty) || called {
		t.Fatalf("want ErrNotEmpty before loading, got %v (called %v)", err, called)
	}
}

// A failed bulk load leaves the schema as it was: empty, indexes in place.
func TestBulkLoadFailureLeavesNothing(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	before := fingerprint(t, s)
	boom := errors.New("line 3: bad")
	err := s.BulkLoad(ctx, func(sink domain.BatchSink) error {
		p, err := sink.Prepare([]domain.Order{richOrder(t, 1, "paid"), richOrder(t, 2, "voided")})
		if err != nil {
			return err
		}
		if err := sink.Store(ctx, p); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	if after := fingerprint(t, s); after != before {
		t.Fatalf("a failed load left:\n%s", after)
	}
	// Values out of a column's range fail the load, not wrap.
	o := richOrder(t, 4, "paid")
	table := 1 << 40
	o.TableNumber = &table
	err = s.BulkLoad(ctx, func(sink domain.BatchSink) error {
		_, err := sink.Prepare([]domain.Order{o})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Fatalf("want out of range, got %v", err)
	}
}

func TestItemKeyIsFNV1a(t *testing.T) {
	for _, n := range []string{"", "soup", "crème brûlée"} {
		h := fnv.New64a()
		h.Write([]byte("00000000-0000-4000-8000-000000000001\x00" + n))
		if got := store.ItemKey("00000000-0000-4000-8000-000000000001", n); got != int64(h.Sum64()) { //nolint:gosec // same wrapping
			t.Fatalf("%q: %d", n, got)
		}
	}
}

// An ingestion that arrives during a bulk load waits for it (no deadlock)
// and then replaces on top of the loaded orders.
func TestIngestionDuringBulkLoadWaits(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	loading := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error, 1)
	loaded := []domain.Order{richOrder(t, 1, "paid"), richOrder(t, 2, "paid")}
	later := []domain.Order{richOrder(t, 2, "refunded"), richOrder(t, 3, "paid")}
	go func() {
		done <- s.BulkLoad(ctx, func(sink domain.BatchSink) error {
			p, err := sink.Prepare(loaded)
			if err != nil {
				return err
			}
			if err := sink.Store(ctx, p); err != nil {
				return err
			}
			close(loading)
			<-release
			return nil
		})
	}()
	<-loading
	replaced := make(chan error, 1)
	go func() { replaced <- s.Replace(ctx, later, nil) }()
	select {
	case err := <-replaced:
		t.Fatalf("the ingestion did not wait for the bulk load: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := <-replaced; err != nil {
		t.Fatal(err)
	}
	var n, refunded int
	if err := s.DB.QueryRow(`SELECT count(*), count(*) FILTER (WHERE status = 'refunded') FROM orders`).Scan(&n, &refunded); err != nil || n != 3 || refunded != 1 {
		t.Fatalf("%d orders, %d refunded (%v); want 3 and 1", n, refunded, err)
	}
}

// A bulk load keeps nothing per stored order in the process: the live heap's
// high-water mark (after each batch) during a load of 4N orders is the one of
// a load of N orders.
func TestBulkLoadMemoryDoesNotGrowWithInput(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 150,000 orders")
	}
	ctx := context.Background()
	const n, batch = 30_000, 1_000
	// Small COPYs, so the rows gathered for the next one do not hide what
	// the load might keep.
	store.SetFlushBytes(t, 64<<10)
	menu := []string{"Soup", "Cake", "Tea", "Coffee", "Salad", "Burger", "Fries", "Pasta", "Pizza", "Water"}
	liveHeap := func(orders int) uint64 {
		s := openStore(t)
		var live uint64
		measure := func() {
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			live = max(live, m.HeapAlloc)
		}
		err := s.BulkLoad(ctx, func(sink domain.BatchSink) error {
			for first := 0; first < orders; first += batch {
				part := make([]domain.Order, 0, batch)
				for i := first; i < first+batch; i++ {
					o := sampleOrder(fmt.Sprintf("order-%07d", i), "paid", menu[i%len(menu)], menu[(i/7)%len(menu)])
					o.RestaurantID = fmt.Sprintf("00000000-0000-4000-8000-%012d", i%4)
					part = append(part, o)
				}
				p, err := sink.Prepare(part)
				if err != nil {
					return err
				}
				if err := sink.Store(ctx, p); err != nil {
					return err
				}
				measure() // everything the load keeps is reachable from here
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var stored int
		if err := s.DB.QueryRow(`SELECT count(*) FROM orders`).Scan(&stored); err != nil || stored != orders {
			t.Fatalf("%d orders stored (%v), want %d", stored, err, orders)
		}
		return live
	}
	liveHeap(batch) // the first load also sets up the test database and connections
	small, large := liveHeap(n), liveHeap(4*n)
	t.Logf("live heap high-water mark: %d KiB for %d orders, %d KiB for %d", small>>10, n, large>>10, 4*n)
	// Growing by even 8 bytes per order would add 720 KiB.
	if large > small+256<<10 {
		t.Fatalf("the live heap grew from %d KiB to %d KiB with 3N more orders", small>>10, large>>10)
	}
}
