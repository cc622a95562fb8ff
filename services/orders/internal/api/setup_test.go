package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/pkg/servicetest"
	"partnerapi.dev/pkg/testenv"
	ordersconfig "partnerapi.dev/services/orders/internal/config"
	"partnerapi.dev/services/orders/internal/server"
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
	*servicetest.Client
	t     testing.TB
	app   *fiber.App
	db    *database.DB
	reads *database.Reads
}

func newEnv(t testing.TB) *env {
	t.Helper()
	url := testenv.NewDatabase(t, "orders", database.MigrateURL("orders", migrations.FS, migrations.Go(migrations.DefaultPartitions)...))
	return newEnvOn(t, database.Config{URL: config.Secret(url)})
}

// newEnvOn is an env on the database of cfg, reading from its replica when
// cfg names one.
func newEnvOn(t testing.TB, cfg database.Config) *env {
	t.Helper()
	db, reads := servicetest.Open(t, cfg, "orders")
	var sc ordersconfig.Serve
	srv := servicetest.Serve(t, &sc, map[string]string{"DATABASE_URL": cfg.URL.Reveal(), "CURSOR_KEY": servicetest.CursorKey, "INGEST_TOKEN": token},
		service.Process{DB: db, Reads: reads}, server.Build)
	e := appEnv(t, srv.Public, sc.Keys())
	e.db, e.reads = db, reads
	return e
}

// appEnv is an env on app, signing with keys.
func appEnv(t testing.TB, app *fiber.App, keys *internalctx.Keyring) *env {
	c := servicetest.NewClient(t, app, keys, "svc.restaurant.read", "svc.orders.read")
	c.ClientID, c.Tenants = "c", tenants
	return &env{Client: c, t: t, app: app}
}

// sign adds the internal context the gateway sends for tenant.
func (e *env) sign(req *http.Request, tenant string) {
	req.Header.Set(internalctx.Header, e.Signed(tenant))
}

// do sends a request; tenant "" sends no internal context.
func (e *env) do(method, path, tenant string, body io.Reader, header map[string]string) (int, []byte) {
	e.t.Helper()
	return e.Do(method, path, tenant, body, header)
}

// searchPage is the data of an order search's answer, as tests read it.
type searchPage struct {
	RestaurantID string `json:"restaurantId"`
	Currency     string `json:"currency"`
	SearchScope  string `json:"searchScope"`
	Period       *struct {
		StartDate    string `json:"startDate"`
		EndDate      string `json:"endDate"`
		TimeZone     string `json:"timeZone"`
		DayStartHour int    `json:"dayStartHour"`
	} `json:"period"`
	Matches []struct {
		OrderID      string `json:"orderId"`
		BusinessDate string `json:"businessDate"`
	} `json:"matches"`
	NextCursor *string `json:"nextCursor"`
	Truncated  bool    `json:"truncated"`
}

// ids are the order ids of the page's matches, in order.
func (p searchPage) ids() []string {
	var out []string
	for _, m := range p.Matches {
		out = append(out, m.OrderID)
	}
	return out
}

// search is a GET of an order search (or its refusal) decoded.
func (e *env) search(path, tenant string) servicetest.Answer[searchPage] {
	e.t.Helper()
	return servicetest.Call[searchPage](e.Client, http.MethodGet, path, tenant, nil)
}

// details is a GET of an order's details (or its refusal) decoded.
func (e *env) details(path, tenant string) servicetest.Answer[orderDetails] {
	e.t.Helper()
	return servicetest.Call[orderDetails](e.Client, http.MethodGet, path, tenant, nil)
}

// page is an order search answered 200, decoded.
func (e *env) page(path, tenant string) searchPage {
	e.t.Helper()
	return servicetest.Must[searchPage](e.Client, http.StatusOK, http.MethodGet, path, tenant, nil)
}

func (e *env) ingest(records ...rec) {
	e.t.Helper()
	status, raw := e.ingestRaw(ndjson(records...))
	if status != http.StatusOK {
		e.t.Fatalf("ingest: %d %s", status, raw)
	}
}

func (e *env) ingestRaw(body string) (int, []byte) {
	return e.Ingest("/internal/v1/orders/ingest", token, body)
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

// seq numbers the records of every test (they run in parallel).
var seq atomic.Int64

// order builds a valid record for restaurant at the given UTC instant.
func order(restaurant, id string, at time.Time, opts ...func(rec)) rec {
	n := seq.Add(1)
	ten := tenants[restaurant]
	r := rec{
		"restaurantId": restaurant, "timeZone": ten.TimeZone, "dayStartHour": ten.DayStartHour,
		"currency": ten.Currency, "country": ten.Country,
		"orderId": id, "restaurantOrderNumber": n, "receiptHash": "rh-" + id,
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

func hel(y int, m time.Month, d, h, min int) time.Time {
	loc, _ := time.LoadLocation("Europe/Helsinki")
	return time.Date(y, m, d, h, min, 0, 0, loc)
}
