package database_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/testenv"
)

// Statements are traced as children of the request that ran them, named
// "<operation> <table>", with placeholders where the values were: a secret or
// an e-mail address bound as a parameter never reaches the tracing backend.
func TestStatementsAreTracedNamedAndWithoutValues(t *testing.T) {
	ctx := context.Background()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	otel.SetTracerProvider(tp)

	url := testenv.NewDatabase(t, "empty", func(context.Context, string) error { return nil })
	db, err := database.Open(ctx, database.Config{URL: config.Secret(url)}, "traced")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(ctx) })
	if _, err := db.Migrate(ctx, migrations); err != nil {
		t.Fatal(err)
	}
	exp.Reset()

	const secret, email = "whsec_0123456789abcdef", "owner@demo.example"
	reqCtx, req := tp.Tracer("test").Start(ctx, "request")
	if err := db.Gorm.WithContext(reqCtx).Exec(`INSERT INTO items (id, name) VALUES (?, ?)`, 1, secret).Error; err != nil {
		t.Fatal(err)
	}
	type item struct {
		ID   int
		Name string
	}
	var found []item
	if err := db.Gorm.WithContext(reqCtx).Table("items").Where("name = ?", email).Find(&found).Error; err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.SQL.QueryRowContext(reqCtx, `SELECT count(*) FROM "items" WHERE name <> $1`, email).Scan(&n); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	// A failed statement's span says why by SQLSTATE, not by Postgres's
	// message, which quotes the value.
	if err := db.Gorm.WithContext(reqCtx).Exec(`SELECT ?::uuid`, email).Error; err == nil {
		t.Fatal("a non-uuid was accepted")
	}
	req.End()

	var names []string
	for _, s := range exp.GetSpans() {
		if s.SpanKind != trace.SpanKindClient && s.Name != "request" {
			t.Errorf("span %q is of kind %s", s.Name, s.SpanKind)
		}
		if s.Parent.SpanID() == req.SpanContext().SpanID() {
			names = append(names, s.Name)
		}
		for _, a := range s.Attributes {
			if v := a.Value.String(); strings.Contains(v, secret) || strings.Contains(v, email) {
				t.Errorf("span %q attribute %s carries a bound value: %s", s.Name, a.Key, v)
			}
		}
		if strings.Contains(s.Status.Description, email) {
			t.Errorf("span %q status carries a bound value: %s", s.Name, s.Status.Description)
		}
		for _, e := range s.Events {
			for _, a := range e.Attributes {
				if v := a.Value.String(); strings.Contains(v, secret) || strings.Contains(v, email) {
					t.Errorf("span %q event %q carries a bound value: %s", s.Name, e.Name, v)
				}
			}
		}
	}
	if got := strings.Join(names, ", "); got != "INSERT items, SELECT items, SELECT items, SELECT" {
		t.Errorf("database spans = %s", got)
	}

	// A statement outside any recorded span (an idle poll) records nothing.
	exp.Reset()
	if err := db.Gorm.WithContext(ctx).Table("items").Where("id = ?", 7).Find(&found).Error; err != nil {
		t.Fatal(err)
	}
	if spans := exp.GetSpans(); len(spans) != 0 {
		t.Errorf("a statement with no trace around it recorded %d spans, first %q", len(spans), spans[0].Name)
	}
}

func TestQuerySummary(t *testing.T) {
	for sql, want := range map[string]string{
		`SELECT * FROM "orders" WHERE id = $1`:                                         "SELECT orders",
		`select o.id from orders o join lines l on l.order_id = o.id`:                  "SELECT orders",
		`SELECT EXISTS (SELECT 1 FROM grants WHERE id = $1)`:                           "SELECT grants",
		`SELECT count(*) FROM (SELECT 1 FROM events) x`:                                "SELECT",
		`SELECT pg_try_advisory_xact_lock(hashtext(current_schema() || '.outbox'))`:    "SELECT",
		`INSERT INTO "webhook_endpoints" ("id","secret") VALUES ($1,$2)`:               "INSERT webhook_endpoints",
		`UPDATE idempotency_keys SET response = $1 WHERE key = $2`:                     "UPDATE idempotency_keys",
		`DELETE FROM outbox_events WHERE pos <= $1`:                                    "DELETE outbox_events",
		`-- name: x` + "\n" + `/* c */ SELECT a FROM events.events WHERE b = 'FROM x'`: "SELECT events.events",
		`WITH due AS (SELECT id FROM deliveries) UPDATE deliveries SET x = 1 FROM due`: "UPDATE deliveries",
		`begin`:                "BEGIN",
		`TRUNCATE TABLE items`: "TRUNCATE items",
		``:                     "UNKNOWN",
	} {
		if got, _ := database.QuerySummary(sql); got != want {
			t.Errorf("QuerySummary(%q) = %q, want %q", sql, got, want)
		}
	}
}
