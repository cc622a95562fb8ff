package store_test

import (
	"context"
	"testing"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"

	"partnerapi.dev/services/orders/internal/domain"
	"partnerapi.dev/services/orders/migrations"
)

// Migration 00005 fills order_item_keys from the orders already stored, and
// going down restores the item-key GIN index it replaces.
func TestItemKeysMigration(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	orders := []domain.Order{sampleOrder("a", "paid", "Soup", "Cake", "SOUP"), sampleOrder("b", "paid"), sampleOrder("c", "voided", "Tea")}
	if err := s.Replace(ctx, orders); err != nil {
		t.Fatal(err)
	}
	gooseStore, err := database.NewStore(database.DialectPostgres, "orders.goose_db_version")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider("", s.DB, migrations.FS, goose.WithStore(gooseStore), goose.WithGoMigrations(migrations.Go()...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 4); err != nil {
		t.Fatal(err)
	}
	var table, gin bool
	if err := s.DB.QueryRow(`SELECT to_regclass('order_item_keys') IS NOT NULL, to_regclass('orders_item_keys') IS NOT NULL`).Scan(&table, &gin); err != nil || table || !gin {
		t.Fatalf("down: order_item_keys there %v, GIN index there %v (%v)", table, gin, err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.DB.QueryRow(`SELECT to_regclass('order_item_keys') IS NOT NULL, to_regclass('orders_item_keys') IS NOT NULL`).Scan(&table, &gin); err != nil || !table || gin {
		t.Fatalf("up: order_item_keys there %v, GIN index there %v (%v)", table, gin, err)
	}
	var n int
	if err := s.DB.QueryRow(`SELECT count(*) FROM order_item_keys`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("%d item keys filled in (%v), want 3", n, err)
	}
	itemKeysMatchOrders(t, s)
}
