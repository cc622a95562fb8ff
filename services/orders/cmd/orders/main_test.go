package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/orders/migrations"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func line(id, status string) string {
	return fmt.Sprintf(`{"restaurantId":"0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a01","timeZone":"Europe/Helsinki","dayStartHour":4,`+
		`"currency":"EUR","country":"FI","orderId":%q,"restaurantOrderNumber":1,"receiptHash":"r","occurredAt":"2026-03-10T10:00:00Z",`+
		`"orderType":"dine_in","tableNumber":1,"status":%q,"paymentMethod":"card","orderOrigin":{"kind":"pos","provider":null},`+
		`"totalAmountMinor":100,"taxCountryCode":"FI","taxRatesAsOf":"2026-01-01","lines":[{"lineId":"l","name":"Soup","quantity":1,"taxEvidence":"snapshot"}]}`, id, status)
}

// import migrates, loads a file (fresh COPY), loads again (replacing), and
// names the bad line of a broken file.
func TestImportCommand(t *testing.T) {
	url := testenv.NewDatabase(t, "empty", func(context.Context, string) error { return nil })
	t.Setenv("DATABASE_URL", url)
	dir := t.TempDir()
	write := func(name string, lines ...string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ctx := context.Background()
	if err := service.Run(ctx, spec, []string{"import", "--batch", "2", "--file", write("a.ndjson", line("a", "paid"), line("b", "paid"), line("c", "paid"))}); err != nil {
		t.Fatal(err)
	}
	if err := service.Run(ctx, spec, []string{"import", "--file", write("b.ndjson", line("a", "refunded"), line("d", "paid"))}); err != nil {
		t.Fatal(err)
	}
	err := service.Run(ctx, spec, []string{"import", "--file", write("c.ndjson", line("e", "paid"), line("f", "lost"))})
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("want the bad line named, got %v", err)
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n, refunded int
	if err := db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE status = 'refunded') FROM orders.orders`).Scan(&n, &refunded); err != nil {
		t.Fatal(err)
	}
	if n != 4 || refunded != 1 {
		t.Fatalf("%d orders, %d refunded; want 4 and 1", n, refunded)
	}
	// The initial load recorded nothing, the replacing import one event per
	// changed order, the failed one nothing; --no-events records nothing.
	if err := service.Run(ctx, spec, []string{"import", "--no-events", "--file", write("d.ndjson", line("g", "paid"), line("a", "paid"))}); err != nil {
		t.Fatal(err)
	}
	var events string
	if err := db.QueryRow(`SELECT string_agg(type || ':' || (data->>'orderId'), ' ' ORDER BY pos) FROM orders.outbox_events`).Scan(&events); err != nil {
		t.Fatal(err)
	}
	if events != "order.updated:a order.created:d" {
		t.Fatalf("recorded events %q", events)
	}
	if err := service.Run(ctx, spec, []string{"nonsense"}); err == nil {
		t.Fatal("unknown command accepted")
	}
}

// Into an empty schema the import is all or nothing: a bad line after
// earlier good batches leaves no order behind.
func TestImportIntoEmptySchemaIsAllOrNothing(t *testing.T) {
	url := testenv.NewDatabase(t, "empty", func(context.Context, string) error { return nil })
	t.Setenv("DATABASE_URL", url)
	p := filepath.Join(t.TempDir(), "a.ndjson")
	body := strings.Join([]string{line("a", "paid"), line("b", "paid"), line("c", "paid"), line("d", "lost")}, "\n")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	err := service.Run(context.Background(), spec, []string{"import", "--batch", "2", "--file", p})
	if err == nil || !strings.Contains(err.Error(), "line 4") || !strings.Contains(err.Error(), "nothing was stored") {
		t.Fatalf("want line 4 named and nothing stored, got %v", err)
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n, indexes, partitionIndexes int
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM orders.orders),
		count(*) FILTER (WHERE NOT c.relispartition), count(*) FILTER (WHERE c.relispartition)
		FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid WHERE c.relnamespace = 'orders'::regnamespace`).Scan(&n, &indexes, &partitionIndexes); err != nil {
		t.Fatal(err)
	}
	// 12 of the order tables (each partition has its own copy of them: 8
	// of orders, 1 of the details, 1 of the item keys, 2 of the item
	// names), the migrations' table, 2 of the outbox.
	if n != 0 || indexes != 15 || partitionIndexes != 12*migrations.DefaultPartitions {
		t.Fatalf("%d orders, %d indexes and %d of partitions after a failed import; want 0, 15 and %d", n, indexes, partitionIndexes, 12*migrations.DefaultPartitions)
	}
}

// The import refuses exactly what the ingestion endpoint refuses, with the
// same message, into an empty schema and into one that holds orders.
func TestImportAppliesTheRecordRules(t *testing.T) {
	url := testenv.NewDatabase(t, "empty", func(context.Context, string) error { return nil })
	t.Setenv("DATABASE_URL", url)
	dir := t.TempDir()
	ctx := context.Background()
	bad := []struct{ line, want string }{
		{strings.Replace(line("x", "paid"), `"quantity":1`, `"quantity":-1`, 1), "line 3: lines[0].quantity: must be ≥ 0"},
		{strings.Replace(line("x", "paid"), `"Soup"`, `"So\u0000up"`, 1), "line 3: lines[0].name: must be valid UTF-8 text without NUL characters"},
		{strings.Replace(line("x", "paid"), `"Soup"`, "\"So\xffup\"", 1), "line 3: lines[0].name: must be valid UTF-8 text without NUL characters"},
		{strings.Replace(line("x", "paid"), `"snapshot"`, `"guess"`, 1), "line 3: lines[0].taxEvidence: must be one of snapshot, legacy, unknown"},
		{line("x", "paid") + ` {}`, "line 3: unexpected data after the JSON object"},
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func() (all, later int) {
		if err := db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE order_id IN ('x', 'c')) FROM orders.orders`).Scan(&all, &later); err != nil {
			t.Fatal(err)
		}
		return all, later
	}
	for _, existing := range []int{0, 1} {
		for i, c := range bad {
			p := filepath.Join(dir, fmt.Sprintf("%d-%d.ndjson", existing, i))
			if err := os.WriteFile(p, []byte(strings.Join([]string{line("a", "paid"), line("b", "paid"), c.line, line("c", "paid")}, "\n")), 0o600); err != nil {
				t.Fatal(err)
			}
			err := service.Run(ctx, spec, []string{"import", "--batch", "2", "--file", p})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want %q, got %v", c.want, err)
			}
			// Into an empty schema nothing stays; into one with orders the
			// batches before the bad line do.
			if all, later := count(); later != 0 || existing == 0 && all != 0 {
				t.Fatalf("%d orders (%d from the bad line on) after a refused import", all, later)
			}
		}
		if existing == 0 {
			p := filepath.Join(dir, "one.ndjson")
			if err := os.WriteFile(p, []byte(line("z", "paid")), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := service.Run(ctx, spec, []string{"import", "--file", p}); err != nil {
				t.Fatal(err)
			}
		}
	}
}
