package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"gorm.io/gorm"
	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/cursor"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/accounting/internal/api"
	"partnerapi.dev/services/accounting/internal/domain"
	"partnerapi.dev/services/accounting/internal/store"
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
	t     testing.TB
	app   *fiber.App
	keys  *internalctx.Keyring
	db    *database.DB
	url   string
	clock *clock
}

func newEnv(t testing.TB) *env {
	t.Helper()
	url := testenv.NewDatabase(t, "accounting", database.MigrateURL("accounting", migrations.FS, migrations.Go()...))
	ctx := context.Background()
	db, err := database.Open(ctx, database.Config{URL: config.Secret(url), MaxOpenConns: 20}, "accounting")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(ctx) })
	keys, err := internalctx.ParseKeys("k1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2026, 7, 20, 10, 0, 0, 0, time.UTC)}
	svc := &domain.Service{Repo: &store.Store{DB: db.Gorm}, Now: c.now}
	h := &api.Handlers{Service: svc, Cursors: cursor.New(bytes.Repeat([]byte{9}, 32)), Keys: keys, IngestToken: token}
	return &env{t: t, app: h.App(nil), keys: keys, db: db, url: url, clock: c}
}

func (e *env) sign(req *http.Request, tenant string, scopes []string) {
	ten := tenants[tenant]
	req.Header.Set(internalctx.Header, e.keys.Sign(internalctx.Context{ClientID: "client-1", UserID: "u", GrantID: "g",
		Scopes: scopes, Tenant: &ten, RequestID: "req-1", IssuedAt: time.Now().Unix()}))
}

// do sends a request; tenant "" sends no internal context. Every partner
// answer is checked against the OpenAPI document.
func (e *env) do(method, path, tenant string, body io.Reader, header map[string]string) (int, []byte) {
	e.t.Helper()
	req := httptest.NewRequest(method, path, body)
	if tenant != "" {
		e.sign(req, tenant, allScopes)
	}
	if body != nil && header == nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := e.app.Test(req, 60_000)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(path, "/v1/") {
		u, _ := url.Parse(path)
		h := resp.Header.Clone()
		h.Set("RateLimit-Policy", `"partner";q=60;w=60`)
		apispec.ValidateResponse(e.t, method, u.Path, u.Query(), resp.StatusCode, h, raw)
	}
	return resp.StatusCode, raw
}

func (e *env) get(path, tenant string) (int, map[string]any) {
	e.t.Helper()
	status, raw := e.do(http.MethodGet, path, tenant, nil, nil)
	return status, decode(e.t, raw)
}

func (e *env) post(path, tenant string, body any) (int, map[string]any) {
	e.t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		e.t.Fatal(err)
	}
	status, out := e.do(http.MethodPost, path, tenant, bytes.NewReader(raw), nil)
	return status, decode(e.t, out)
}

func decode(t testing.TB, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not JSON: %s", raw)
	}
	return m
}

func (e *env) ingest(records ...rec) {
	e.t.Helper()
	status, raw := e.ingestRaw(ndjson(records...))
	if status != http.StatusOK {
		e.t.Fatalf("ingest: %d %s", status, raw)
	}
}

func (e *env) ingestRaw(body string) (int, []byte) {
	return e.do(http.MethodPost, "/internal/v1/accounting/ingest", "", strings.NewReader(body),
		map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/x-ndjson"})
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

func data(t testing.TB, body map[string]any) map[string]any {
	t.Helper()
	d, ok := body["data"].(map[string]any)
	if !ok {
		t.Fatalf("no data in %v", body)
	}
	return d
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
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
