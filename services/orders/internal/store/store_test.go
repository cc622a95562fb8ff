package store_test

import (
	"context"
	"errors"
	"fmt"
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
	url := testenv.NewDatabase(t, "orders", database.MigrateURL("orders", migrations.FS, migrations.Go()...))
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
	if err := s.Replace(ctx, []domain.Order{sampleOrder("a", "paid", "Soup", "Cake"), sampleOrder("b", "paid", "Tea")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Replace(ctx, []domain.Order{sampleOrder("a", "refunded", "Soup"), sampleOrder("c", "paid", "Tea")}); err != nil {
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
			errs <- s.Replace(ctx, batch)
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
	if err := s.DB.QueryRow(`SELECT count(*) FROM order_lines`).Scan(&stored); err != nil || stored != 80 {
		t.Fatalf("%d line rows; want 80", stored)
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
