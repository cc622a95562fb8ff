package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"gorm.io/gorm"
	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/pkg/servicetest"
	"partnerapi.dev/pkg/testenv"
	acctconfig "partnerapi.dev/services/accounting/internal/config"
	"partnerapi.dev/services/accounting/internal/server"
	"partnerapi.dev/services/accounting/migrations"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	helsinki = "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a01"
	newYork  = "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a02"
	other    = "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a03"
	token    = "test-ingest-token-0123456789"
)

var tenants = map[string]internalctx.Tenant{
	helsinki: {ID: helsinki, TimeZone: "Europe/Helsinki", DayStartHour: 4, Currency: "EUR", Country: "FI"},
	newYork:  {ID: newYork, TimeZone: "America/New_York", DayStartHour: 6, Currency: "USD", Country: "US"},
	other:    {ID: other, TimeZone: "Europe/Helsinki", DayStartHour: 4, Currency: "EUR", Country: "FI"},
}

var allScopes = []string{"svc.restaurant.read", "svc.orders.read", "svc.accounting.read", "svc.analytics.read", "svc.accounting.corrections.write"}

// clock is the service's injectable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type env struct {
	*servicetest.Client
	t     testing.TB
	app   *fiber.App
	db    *database.DB
	reads *database.Reads
	url   string
	clock *clock
}

func newEnv(t testing.TB) *env {
	t.Helper()
	url := testenv.NewDatabase(t, "accounting", database.MigrateURL("accounting", migrations.FS, migrations.Go()...))
	return newEnvOn(t, database.Config{URL: config.Secret(url), MaxOpenConns: 20})
}

// newEnvOn is an env on the database of cfg, reading from its replica when
// cfg names one.
func newEnvOn(t testing.TB, cfg database.Config) *env {
	t.Helper()
	url := cfg.URL.Reveal()
	db, reads := servicetest.Open(t, cfg, "accounting")
	c := &clock{t: time.Date(2026, 7, 20, 10, 0, 0, 0, time.UTC)}
	var sc acctconfig.Serve
	srv := servicetest.Serve(t, &sc, map[string]string{"DATABASE_URL": url, "CURSOR_KEY": servicetest.CursorKey, "INGEST_TOKEN": token},
		service.Process{DB: db, Reads: reads, Now: c.now}, server.Build)
	client := servicetest.NewClient(t, srv.Public, sc.Keys(), allScopes...)
	client.Tenants, client.Timeout = tenants, time.Minute
	return &env{Client: client, t: t, app: srv.Public, db: db, reads: reads, url: url, clock: c}
}

// do sends a request; tenant "" sends no internal context. Every partner
// answer is checked against the OpenAPI document.
func (e *env) do(method, path, tenant string, body io.Reader, header map[string]string) (int, []byte) {
	e.t.Helper()
	return e.Do(method, path, tenant, body, header)
}

// get is a GET of path whose answer's data is a T.
func get[T any](e *env, path, tenant string) servicetest.Answer[T] {
	e.t.Helper()
	return servicetest.Call[T](e.Client, http.MethodGet, path, tenant, nil)
}

// post is a POST of body as JSON whose answer's data is a T.
func post[T any](e *env, path, tenant string, body any) servicetest.Answer[T] {
	e.t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		e.t.Fatal(err)
	}
	return servicetest.Call[T](e.Client, http.MethodPost, path, tenant, raw)
}

// mustGet is get answered 200, its data.
func mustGet[T any](e *env, path, tenant string) T {
	e.t.Helper()
	return servicetest.Must[T](e.Client, http.StatusOK, http.MethodGet, path, tenant, nil)
}

// mustPost is post answered 200, its data.
func mustPost[T any](e *env, path, tenant string, body any) T {
	e.t.Helper()
	a := post[T](e, path, tenant, body)
	if a.Status != http.StatusOK {
		e.t.Fatalf("POST %s: %d, want 200: %s", path, a.Status, a.Raw)
	}
	return a.Data
}

// refusal is a GET (body nil) or a POST of body as JSON whose answer is
// read as the error envelope.
func (e *env) refusal(path, tenant string, body any) servicetest.Answer[json.RawMessage] {
	e.t.Helper()
	if body == nil {
		return get[json.RawMessage](e, path, tenant)
	}
	return post[json.RawMessage](e, path, tenant, body)
}

func (e *env) ingest(records ...rec) {
	e.t.Helper()
	status, raw := e.ingestRaw(ndjson(records...))
	if status != http.StatusOK {
		e.t.Fatalf("ingest: %d %s", status, raw)
	}
}

func (e *env) ingestRaw(body string) (int, []byte) {
	return e.Ingest("/internal/v1/accounting/ingest", token, body)
}

func ndjson(records ...rec) string {
	var b strings.Builder
	for _, r := range records {
		raw, err := json.Marshal(r)
		if err != nil {
			panic(err)
		}
		b.Write(raw)
		b.WriteByte('\n')
	}
	return b.String()
}

// rec is an ingestion record as a map, so tests can change any field.
type rec map[string]any

func envelope(restaurant, typ string, body rec) rec {
	ten := tenants[restaurant]
	r := rec{"type": typ, "restaurantId": restaurant, "timeZone": ten.TimeZone, "dayStartHour": ten.DayStartHour, "currency": ten.Currency}
	if typ == "payment_source" {
		r["paymentSource"] = body
	} else {
		r["refundEvent"] = body
	}
	return r
}

// source builds an order payment: gross split 1000 reduced (VAT 123) and
// the rest standard (VAT 20% of it rounded down).
func source(restaurant, id, method string, gross int64, at time.Time, opts ...func(rec)) rec {
	reduced := min(gross, 1000)
	std := gross - reduced
	vr, vs := reduced*14/114, std*2550/12550
	p := rec{
		"sourceKind": "order", "sourceRecordId": id, "receiptHash": "rh-" + id, "parentReceiptHash": nil,
		"componentId": nil, "tabSplitId": nil, "sourceGroupId": nil, "orderIds": []string{id},
		"occurredAt": at.UTC().Format(time.RFC3339Nano), "methodKey": method, "grossMinor": gross, "vatMinor": vr + vs,
		"transactionCount": 1, "vatEvidence": "known",
		"grossByRateMinor": rec{"zero": 0, "special": 0, "reduced": reduced, "standard": std, "unknown": 0},
		"vatByRateMinor":   rec{"zero": 0, "special": 0, "reduced": vr, "standard": vs, "unknown": 0},
		"discountMinor":    0, "tipMinor": 0,
	}
	for _, o := range opts {
		o(p)
	}
	return envelope(restaurant, "payment_source", p)
}

func unknownVat(p rec) {
	g := p["grossMinor"].(int64)
	v := p["vatMinor"].(int64)
	p["vatEvidence"] = "unknown"
	p["grossByRateMinor"] = rec{"zero": 0, "special": 0, "reduced": 0, "standard": 0, "unknown": g}
	p["vatByRateMinor"] = rec{"zero": 0, "special": 0, "reduced": 0, "standard": 0, "unknown": v}
}

func set(k string, v any) func(rec) { return func(r rec) { r[k] = v } }

func refund(restaurant, id, kind string, orderID any, amount int64, at time.Time, opts ...func(rec)) rec {
	var impact any
	if kind == "refund" {
		vat := amount * 14 / 114
		impact = rec{"grossMinor": -amount, "netMinor": -(amount - vat), "vatMinor": -vat,
			"vatByRateMinor": rec{"zero": 0, "special": 0, "reduced": -vat, "standard": 0, "unknown": 0}}
	}
	p := rec{"refundId": id, "kind": kind, "occurredAt": at.UTC().Format(time.RFC3339Nano), "orderId": orderID,
		"originalBusinessDate": nil, "methodKey": "card", "amountMinor": amount,
		"returnedLines":    []any{rec{"lineId": "l1", "catalogItemId": nil, "name": "Salmon Soup", "quantityDelta": -1}},
		"accountingImpact": impact, "legacyTiming": false}
	for _, o := range opts {
		o(p)
	}
	return envelope(restaurant, "refund_event", p)
}

func hel(y int, m time.Month, d, h, min int) time.Time {
	loc, _ := time.LoadLocation("Europe/Helsinki")
	return time.Date(y, m, d, h, min, 0, 0, loc)
}

func reportPath(restaurant, scope, start, end string) string {
	return fmt.Sprintf("/v1/restaurants/%s/payment-report?scope=%s&start_date=%s&end_date=%s", restaurant, scope, start, end)
}

// openAdmin opens the server's maintenance database (for stopping the test
// database).
func openAdmin(t testing.TB, url string) *gorm.DB {
	t.Helper()
	db, err := database.Open(context.Background(), database.Config{URL: config.Secret(url)}, "public")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(context.Background()) })
	return db.Gorm
}

// use makes t the test e reports to (a fuzz target's).
func (e *env) use(t testing.TB) { e.t = t; e.Use(t) }
