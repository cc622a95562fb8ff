package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"
	goosedb "github.com/pressly/goose/v3/database"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/orders/internal/domain"
	"partnerapi.dev/services/orders/internal/store"
	"partnerapi.dev/services/orders/migrations"
)

// migrator applies the orders migrations to db's schema one by one, the
// order tables getting partitions hash partitions.
func migrator(t testing.TB, db *sql.DB, partitions int) *goose.Provider {
	t.Helper()
	gooseStore, err := goosedb.NewStore(goosedb.DialectPostgres, "orders.goose_db_version")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider("", db, migrations.FS, goose.WithStore(gooseStore), goose.WithGoMigrations(migrations.Go(partitions)...))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Migration 00005 fills order_item_keys from the orders already stored, and
// going down restores the item-key GIN index it replaces.
func TestItemKeysMigration(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	orders := []domain.Order{sampleOrder("a", "paid", "Soup", "Cake", "SOUP"), sampleOrder("b", "paid"), sampleOrder("c", "voided", "Tea")}
	if err := s.Replace(ctx, orders, nil); err != nil {
		t.Fatal(err)
	}
	p := migrator(t, s.DB, migrations.DefaultPartitions)
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

// Orders written by the current schema survive going down to version 7
// (before the partitions, with the five child tables) and up again:
// migration 8 turns the order tables into hash partitions by restaurant,
// every row kept, each table with the indexes, constraints and statistics
// objects it had, the statistics objects on every partition too; migration
// 10 folds the child tables into order_details, partitioned alike, and
// migration 11 turns its objects into the store's positional arrays, with
// the values the store writes. Going down turns them back into objects and
// then into plain tables, rows kept.
func TestPartitionAndDetailsMigrationsKeepRows(t *testing.T) {
	ctx := context.Background()
	const partitions = 4
	url := testenv.NewDatabase(t, "orders-migrations-round-trip", func(ctx context.Context, url string) error {
		db, err := database.Open(ctx, database.Config{URL: config.Secret(url)}, "orders")
		if err != nil {
			return err
		}
		defer db.Close(ctx)
		if _, err := db.SQL.ExecContext(ctx, "CREATE SCHEMA orders"); err != nil {
			return err
		}
		_, err = migrator(t, db.SQL, partitions).Up(ctx)
		return err
	})
	db, err := database.Open(ctx, database.Config{URL: config.Secret(url)}, "orders")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(ctx) })
	s := &store.Store{DB: db.SQL}

	var orders []domain.Order
	for i := range 12 {
		orders = append(orders, richOrder(t, i, "paid"))
		o := sampleOrder(fmt.Sprintf("s-%d", i), "refunded", "Soup", fmt.Sprintf("Dish %d", i))
		o.RestaurantID = fmt.Sprintf("00000000-0000-4000-8000-0000000000%02d", 10+i)
		orders = append(orders, o)
	}
	if err := s.Replace(ctx, orders, nil); err != nil {
		t.Fatal(err)
	}
	stored := func() []domain.Order {
		t.Helper()
		out := make([]domain.Order, len(orders))
		for i, o := range orders {
			got, err := s.Get(ctx, o.RestaurantID, o.OrderID)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = got
		}
		return out
	}
	written := stored()
	partitioned := func() (tables, parts int) {
		t.Helper()
		if err := s.DB.QueryRow(`SELECT count(DISTINCT pt.partrelid), count(i.inhrelid) FROM pg_partitioned_table pt
			JOIN pg_class c ON c.oid = pt.partrelid LEFT JOIN pg_inherits i ON i.inhparent = pt.partrelid
			WHERE c.relnamespace = current_schema()::regnamespace`).Scan(&tables, &parts); err != nil {
			t.Fatal(err)
		}
		return tables, parts
	}
	// The order tables' own indexes, constraints and statistics objects.
	definitions := func() string {
		t.Helper()
		var defs string
		if err := s.DB.QueryRow(`WITH d(def) AS (
			SELECT replace(pg_get_indexdef(indexrelid), ' ON ONLY ', ' ON ') FROM pg_index WHERE indrelid = ANY($1::text[]::regclass[])
			UNION ALL SELECT conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
				FROM pg_constraint WHERE conrelid = ANY($1::text[]::regclass[])
			UNION ALL SELECT pg_get_statisticsobjdef(oid) FROM pg_statistic_ext WHERE stxrelid = ANY($1::text[]::regclass[]))
			SELECT string_agg(def, E'\n' ORDER BY def) FROM d`, migrations.PartitionedTables).Scan(&defs); err != nil {
			t.Fatal(err)
		}
		return defs
	}

	p := migrator(t, s.DB, partitions)
	if _, err := p.DownTo(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if tables, _ := partitioned(); tables != 0 {
		t.Fatalf("%d partitioned tables at version 7", tables)
	}
	var lines int
	if err := s.DB.QueryRow(`SELECT count(*) FROM order_lines`).Scan(&lines); err != nil || lines == 0 {
		t.Fatalf("%d line rows at version 7 (%v)", lines, err)
	}
	rows, defs := tableRows(t, s), definitions()

	if _, err := p.UpTo(ctx, 9); err != nil {
		t.Fatal(err)
	}
	if tables, parts := partitioned(); tables != len(migrations.PartitionedTables) || parts != partitions*tables {
		t.Fatalf("%d partitioned tables with %d partitions, want %d with %d each", tables, parts, len(migrations.PartitionedTables), partitions)
	}
	if got := tableRows(t, s); got != rows {
		t.Fatalf("rows after the migration:\n%s\nbefore:\n%s", got, rows)
	}
	if got := definitions(); got != defs {
		t.Fatalf("definitions after the migration:\n%s\nbefore:\n%s", got, defs)
	}
	var used, stats int
	if err := s.DB.QueryRow(`SELECT count(DISTINCT tableoid) FROM orders`).Scan(&used); err != nil || used < 2 {
		t.Fatalf("the orders are in %d partitions (%v)", used, err)
	}
	if err := s.DB.QueryRow(`SELECT count(*) FROM pg_statistic_ext s JOIN pg_inherits i ON i.inhrelid = s.stxrelid
		WHERE i.inhparent = 'order_item_keys'::regclass`).Scan(&stats); err != nil || stats != partitions {
		t.Fatalf("%d partitions of order_item_keys have statistics objects (%v), want %d", stats, err, partitions)
	}
	itemKeysMatchOrders(t, s)

	// Migration 12 builds orders_recent anew partition by partition; one
	// that failed half-way left orders_recent_new behind, which it drops.
	if _, err := p.UpTo(ctx, 11); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB.ExecContext(ctx, "CREATE INDEX orders_recent_new ON ONLY orders (restaurant_id)"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	var recent string
	var valid int
	if err := s.DB.QueryRow(`SELECT pg_get_indexdef('orders_recent'::regclass), (SELECT count(*) FROM pg_inherits h JOIN pg_index i ON i.indexrelid = h.inhrelid
		WHERE h.inhparent = 'orders_recent'::regclass AND i.indisvalid)`).Scan(&recent, &valid); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(recent, "INCLUDE (business_date, local_minute, total_amount_minor)") || valid != partitions {
		t.Fatalf("after migration 12: %s, with %d valid partition indexes, want %d", recent, valid, partitions)
	}
	for i, got := range stored() {
		if !reflect.DeepEqual(got, written[i]) {
			t.Fatalf("order after migrations 10 and 11:\n%+v\nwritten:\n%+v", got, written[i])
		}
	}
	var children, parts int
	if err := s.DB.QueryRow(`SELECT count(*) FROM pg_class WHERE relname = ANY('{order_lines,order_line_options,order_vat_rows,order_refunded_items,order_payment_references}')
		AND relnamespace = current_schema()::regnamespace`).Scan(&children); err != nil || children != 0 {
		t.Fatalf("%d child tables left after migration 10 (%v)", children, err)
	}
	if err := s.DB.QueryRow(`SELECT count(*) FROM pg_inherits WHERE inhparent = 'order_details'::regclass`).Scan(&parts); err != nil || parts != partitions {
		t.Fatalf("order_details has %d partitions (%v), want %d", parts, err, partitions)
	}
	// Migrations 10 and 11 leave the store's arrays: the same orders
	// written again leave the same values.
	details := func() string {
		t.Helper()
		var rows string
		if err := s.DB.QueryRow(`SELECT string_agg(concat_ws(' ', restaurant_id, order_id, lines::jsonb, vat_rows::jsonb,
			refunded_items::jsonb, payment_references::jsonb), E'\n' ORDER BY restaurant_id, order_id) FROM order_details`).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		return rows
	}
	migrated := details()
	if err := s.Replace(ctx, orders, nil); err != nil {
		t.Fatal(err)
	}
	if got := details(); got != migrated {
		t.Fatalf("details written by the store:\n%s\nby migrations 10 and 11:\n%s", got, migrated)
	}
	// Written after the migration, an order goes into its partition.
	more := sampleOrder("after", "paid", "Tea")
	if err := s.Replace(ctx, []domain.Order{more}, nil); err != nil {
		t.Fatal(err)
	}

	if _, err := p.DownTo(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if tables, _ := partitioned(); tables != 0 {
		t.Fatalf("%d partitioned tables after going down", tables)
	}
	if got := definitions(); got != defs {
		t.Fatalf("definitions after going down:\n%s\nbefore:\n%s", got, defs)
	}
	var n int
	if err := s.DB.QueryRow(`SELECT count(*) FROM orders`).Scan(&n); err != nil || n != len(orders)+1 {
		t.Fatalf("%d orders after going down (%v), want %d", n, err, len(orders)+1)
	}
	itemKeysMatchOrders(t, s)
}
