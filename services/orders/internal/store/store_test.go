package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/orders/internal/domain"
	"partnerapi.dev/services/orders/internal/store"
	"partnerapi.dev/services/orders/migrations"
)

func openStore(t testing.TB) *store.Store {
	t.Helper()
	ctx := context.Background()
	url := testenv.NewDatabase(t, "orders", database.MigrateURL("orders", migrations.FS, migrations.Go(migrations.DefaultPartitions)...))
	db, err := database.Open(ctx, database.Config{URL: config.Secret(url)}, "orders")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(ctx) })
	return &store.Store{DB: db.SQL}
}

func sampleOrder(id, status string, lines ...string) domain.Order {
	at := time.Date(2026, 3, 10, 10, 0, 0, 0, time.UTC)
	o := domain.Order{RestaurantID: "00000000-0000-4000-8000-000000000001", OrderID: id, RestaurantOrderNumber: 1,
		ReceiptHash: "r-" + id, OccurredAt: at, BusinessDate: bizdate.FromTime(at), LocalMinute: 720, OrderType: "dine_in",
		Status: status, RecordedPaymentMethod: "card", PaymentMethod: "card", Origin: domain.Origin{Kind: "pos"},
		Currency: "EUR", VatAllocationMethod: "stored", TaxCountryCode: "FI", TaxRatesAsOf: bizdate.FromTime(at)}
	for i, n := range lines {
		o.Lines = append(o.Lines, domain.Line{LineID: id + string(rune('a'+i)), Name: n, Quantity: 1, TaxEvidence: "snapshot", VatRates: []domain.VatRate{}})
	}
	o.LineCount = len(o.Lines)
	return o
}

// A fresh load COPYs straight in; meeting an existing order it falls back to
// the replacing upsert.
func TestFreshLoadFallsBackToReplace(t *testing.T) {
	s := openStore(t)
	s.FreshLoad = true
	ctx := context.Background()
	if err := s.Replace(ctx, []domain.Order{sampleOrder("a", "paid", "Soup", "Cake"), sampleOrder("b", "paid", "Tea")}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Replace(ctx, []domain.Order{sampleOrder("a", "refunded", "Soup"), sampleOrder("c", "paid", "Tea")}, nil); err != nil {
		t.Fatal(err)
	}
	o, err := s.Get(ctx, "00000000-0000-4000-8000-000000000001", "a")
	if err != nil || o.Status != "refunded" || len(o.Lines) != 1 {
		t.Fatalf("not replaced: %+v %v", o, err)
	}
	var n int
	if err := s.DB.QueryRow(`SELECT count(*) FROM orders`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("%d orders, %v", n, err)
	}
	if err := s.DB.QueryRow(`SELECT count(*) FROM order_item_names`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("%d distinct names, %v", n, err)
	}
}

// Concurrent batches that share orders and item names serialise without
// deadlocks, and every order ends up stored once.
func TestConcurrentReplace(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	names := []string{"Soup", "Cake", "Tea", "Coffee", "Bun", "Pie"}
	errs := make(chan error, 8)
	for w := range 8 {
		go func() {
			var batch []domain.Order
			for i := range 40 {
				k := (i*7 + w*13) % 40 // each worker its own order of the same ids
				batch = append(batch, sampleOrder(fmt.Sprintf("o%02d", k), "paid", names[(k+w)%6], names[(k+w+1)%6]))
			}
			errs <- s.Replace(ctx, batch, nil)
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var n, lines int
	if err := s.DB.QueryRow(`SELECT count(*), sum(line_count) FROM orders`).Scan(&n, &lines); err != nil || n != 40 || lines != 80 {
		t.Fatalf("%d orders with %d lines (%v); want 40 with 80", n, lines, err)
	}
	var stored int
	if err := s.DB.QueryRow(`SELECT sum(json_array_length(lines::json)) FROM order_details`).Scan(&stored); err != nil || stored != 80 {
		t.Fatalf("%d stored lines (%v); want 80", stored, err)
	}
	itemKeysMatchOrders(t, s)
}

// itemKeysMatchOrders checks that order_item_keys holds exactly a row per
// stored order and item key, at the order's time.
func itemKeysMatchOrders(t *testing.T, s *store.Store) {
	t.Helper()
	var missing, extra int
	err := s.DB.QueryRow(`WITH want AS (SELECT restaurant_id, k AS item_key, occurred_at, order_id FROM orders, unnest(item_keys) k)
		SELECT (SELECT count(*) FROM (SELECT * FROM want EXCEPT ALL SELECT * FROM order_item_keys) m),
		       (SELECT count(*) FROM (SELECT * FROM order_item_keys EXCEPT ALL SELECT * FROM want) e)`).Scan(&missing, &extra)
	if err != nil || missing != 0 || extra != 0 {
		t.Fatalf("order_item_keys misses %d keys of the orders and has %d others (%v)", missing, extra, err)
	}
}

// Text Postgres cannot hold never reaches it, whoever calls the store.
func TestInvalidTextNeverReachesTheDatabase(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	const rid = "00000000-0000-4000-8000-000000000001"
	for _, bad := range []string{"a\x00b", "\xff\xfe", "\xc3\x28", "\xed\xa0\x80", "\xc0\xaf"} {
		var inv *domain.InvalidError
		if _, err := s.Get(ctx, rid, bad); !errors.As(err, &inv) || inv.Field != "orderId" {
			t.Fatalf("Get %q: %v", bad, err)
		}
		v := bad
		for _, f := range []domain.Filter{
			{RestaurantID: rid, Limit: 10, OrderID: &v},
			{RestaurantID: rid, Limit: 10, ReceiptReference: &v},
			{RestaurantID: rid, Limit: 10, ItemName: &v},
			{RestaurantID: rid, Limit: 10, After: &domain.Position{OccurredAt: time.Now(), OrderID: v}},
		} {
			if _, err := s.Search(ctx, f); !errors.As(err, &inv) {
				t.Fatalf("Search %+v: %v", f, err)
			}
		}
	}
}

// Replacing an order replaces its item keys: its old names' keys go, its new
// names' keys come at its new time, whichever way it is stored (events
// recorded or not, a fresh load falling back to the replace), and
// item_name finds it by its new names only.
func TestReplaceChangesItemKeys(t *testing.T) {
	events := domain.OrderEvents{View: func(o domain.Order) any { return o.OrderID }}.Decide
	for name, c := range map[string]struct {
		freshLoad bool
		decide    domain.Decide
	}{
		"plain":      {},
		"events":     {decide: events},
		"fresh load": {freshLoad: true},
	} {
		t.Run(name, func(t *testing.T) {
			s := openStore(t)
			s.FreshLoad = c.freshLoad
			ctx := context.Background()
			a := sampleOrder("a", "paid", "Soup", "Cake", "SOUP")
			b := sampleOrder("b", "paid", "Soup")
			if err := s.Replace(ctx, []domain.Order{a, b}, c.decide); err != nil {
				t.Fatal(err)
			}
			a2 := sampleOrder("a", "refunded", "Tea", "CAKE")
			a2.OccurredAt = a.OccurredAt.Add(time.Hour)
			if err := s.Replace(ctx, []domain.Order{a2}, c.decide); err != nil {
				t.Fatal(err)
			}
			rid := a.RestaurantID
			want := []string{
				fmt.Sprintf("a %d %s", store.ItemKey(rid, "cake"), a2.OccurredAt.Format(time.RFC3339)),
				fmt.Sprintf("a %d %s", store.ItemKey(rid, "tea"), a2.OccurredAt.Format(time.RFC3339)),
				fmt.Sprintf("b %d %s", store.ItemKey(rid, "soup"), b.OccurredAt.Format(time.RFC3339)),
			}
			slices.Sort(want)
			var got []string
			rows, err := s.DB.QueryContext(ctx, `SELECT order_id, item_key, occurred_at FROM order_item_keys WHERE restaurant_id = $1`, rid)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			for rows.Next() {
				var id string
				var key int64
				var at time.Time
				if err := rows.Scan(&id, &key, &at); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%s %d %s", id, key, at.UTC().Format(time.RFC3339)))
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("item keys\n got %v\nwant %v", got, want)
			}
			for item, ids := range map[string][]string{"soup": {"b"}, "cake": {"a"}, "tea": {"a"}} {
				page, err := s.Search(ctx, domain.Filter{RestaurantID: rid, Limit: 10, ItemName: &item})
				if err != nil {
					t.Fatal(err)
				}
				var found []string
				for _, o := range page.Orders {
					found = append(found, o.OrderID)
				}
				if !slices.Equal(found, ids) {
					t.Errorf("item_name %s finds %v, want %v", item, found, ids)
				}
			}
		})
	}
}
