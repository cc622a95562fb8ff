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
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/cursor"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/orders/internal/api"
	"partnerapi.dev/services/orders/internal/store"
	"partnerapi.dev/services/orders/migrations"
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

type env struct {
	t    testing.TB
	app  *fiber.App
	keys *internalctx.Keyring
	db   *database.DB
}

func newEnv(t testing.TB) *env {
	t.Helper()
	url := testenv.NewDatabase(t, "orders", database.MigrateURL("orders", migrations.FS, migrations.Go()...))
	ctx := context.Background()
	db, err := database.Open(ctx, database.Config{URL: config.Secret(url)}, "orders")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(ctx) })
	keys, err := internalctx.ParseKeys("k1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	h := &api.Handlers{Repo: &store.Store{DB: db.SQL, EventData: api.OrderEventData}, Cursors: cursor.New(bytes.Repeat([]byte{9}, 32)), Keys: keys, IngestToken: token}
	return &env{t: t, app: h.App(nil), keys: keys, db: db}
}

// sign adds the internal context the gateway sends for tenant.
func (e *env) sign(req *http.Request, tenant string) {
	ten := tenants[tenant]
	req.Header.Set(internalctx.Header, e.keys.Sign(internalctx.Context{ClientID: "c", UserID: "u", GrantID: "g",
		Scopes: []string{"svc.restaurant.read", "svc.orders.read"}, Tenant: &ten, RequestID: "req-1"}))
}

// do sends a request; tenant "" sends no internal context.
func (e *env) do(method, path, tenant string, body io.Reader, header map[string]string) (int, []byte) {
	e.t.Helper()
	req := httptest.NewRequest(method, path, body)
	if tenant != "" {
		e.sign(req, tenant)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := e.app.Test(req, 30_000)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(path, "/v1/") {
		// every partner answer must be one the OpenAPI document allows
		// (RateLimit-Policy is the gateway's, added at the edge)
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
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		e.t.Fatalf("GET %s: %d %s", path, status, raw)
	}
	return status, m
}

func (e *env) ingest(records ...rec) {
	e.t.Helper()
	status, raw := e.ingestRaw(ndjson(records...))
	if status != http.StatusOK {
		e.t.Fatalf("ingest: %d %s", status, raw)
	}
}

func (e *env) ingestRaw(body string) (int, []byte) {
	return e.do(http.MethodPost, "/internal/v1/orders/ingest", "", strings.NewReader(body),
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

var seq int

// order builds a valid record for restaurant at the given UTC instant.
func order(restaurant, id string, at time.Time, opts ...func(rec)) rec {
	seq++
	ten := tenants[restaurant]
	r := rec{
		"restaurantId": restaurant, "timeZone": ten.TimeZone, "dayStartHour": ten.DayStartHour,
		"currency": ten.Currency, "country": ten.Country,
		"orderId": id, "restaurantOrderNumber": seq, "receiptHash": "rh-" + id,
		"occurredAt": at.UTC().Format(time.RFC3339Nano), "orderType": "dine_in", "tableNumber": 4,
		"status": "paid", "paymentMethod": "card", "orderOrigin": map[string]any{"kind": "pos", "provider": nil},
		"originalAmountMinor": 2480, "totalAmountMinor": 2480, "vatMinor": 290, "refundAmountMinor": 0,
		"discountAmountMinor": 0, "grossSalesMinor": 2480, "netSalesMinor": 2190, "tipAmountMinor": 0,
		"vatAllocationMethod": "stored", "taxCountryCode": ten.Country, "taxRatesAsOf": "2026-01-01",
		"lines": []any{
			map[string]any{"lineId": id + "-l1", "catalogItemId": "c0a1b2c3-0000-4000-8000-000000000001", "catalogItemKind": "menu_item",
				"catalogCategoryId": "c0a1b2c3-0000-4000-8000-0000000000c1", "menuId": "c0a1b2c3-0000-4000-8000-0000000000a1",
				"name": "Salmon Soup", "category": "Mains", "itemType": "food", "quantity": 1, "unitPriceMinor": 1680,
				"originalUnitPriceMinor": nil, "grossAmountMinor": 1680, "discountAmountMinor": 0, "vatAmountMinor": 153,
				"taxEvidence": "snapshot", "taxCountryCode": ten.Country, "taxRatesAsOf": "2026-01-01",
				"vatRates":        []any{map[string]any{"category": "reduced", "rateBps": 1400, "vatAmountMinor": 153}},
				"selectedOptions": []any{map[string]any{"optionId": "0f000000-0000-4000-8000-000000000001", "optionGroupId": "0f000000-0000-4000-8000-0000000000g1", "name": "Rye bread", "quantity": 1, "unitPriceMinor": 0, "grossAmountMinor": 0, "vatAmountMinor": 0}}},
			map[string]any{"lineId": id + "-l2", "catalogItemId": "c0a1b2c3-0000-4000-8000-000000000002", "catalogItemKind": "menu_item",
				"catalogCategoryId": "c0a1b2c3-0000-4000-8000-0000000000c2", "menuId": "c0a1b2c3-0000-4000-8000-0000000000a1",
				"name": "Lingonberry Cake", "category": "Desserts", "itemType": "food", "quantity": 1, "unitPriceMinor": 800,
				"originalUnitPriceMinor": nil, "grossAmountMinor": 800, "discountAmountMinor": 0, "vatAmountMinor": 137,
				"taxEvidence": "snapshot", "taxCountryCode": ten.Country, "taxRatesAsOf": "2026-01-01",
				"vatRates": []any{map[string]any{"category": "standard", "rateBps": 2550, "vatAmountMinor": 137}}, "selectedOptions": []any{}},
		},
		"vatRows": []any{
			map[string]any{"category": "reduced", "rateBps": 1400, "grossAmountMinor": 1680, "netAmountMinor": 1527, "vatAmountMinor": 153},
			map[string]any{"category": "standard", "rateBps": 2550, "grossAmountMinor": 800, "netAmountMinor": 663, "vatAmountMinor": 137},
		},
		"refundedItems": []any{},
		"paymentReferences": []any{map[string]any{"provider": "card_terminal", "receiptHash": "rh-" + id, "checkoutId": "co-" + id,
			"transactionId": "tx-" + id, "transactionCode": "TC" + id, "sessionId": nil, "recordedAmountMinor": 2480,
			"currency": ten.Currency, "createdAt": at.UTC().Format(time.RFC3339Nano)}},
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

func set(k string, v any) func(rec) { return func(r rec) { r[k] = v } }

func lineNames(names ...string) func(rec) {
	return func(r rec) {
		lines := r["lines"].([]any)
		for i, n := range names {
			if i < len(lines) {
				lines[i].(map[string]any)["name"] = n
			}
		}
	}
}

func ids(t *testing.T, body map[string]any) []string {
	t.Helper()
	data, ok := body["data"].(map[string]any)
	if !ok {
		t.Fatalf("no data in %v", body)
	}
	var out []string
	for _, m := range data["matches"].([]any) {
		out = append(out, m.(map[string]any)["orderId"].(string))
	}
	return out
}

func hel(y int, m time.Month, d, h, min int) time.Time {
	loc, _ := time.LoadLocation("Europe/Helsinki")
	return time.Date(y, m, d, h, min, 0, 0, loc)
}

var _ = fmt.Sprint
