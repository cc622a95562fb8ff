package api_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/pkg/servicetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

const base = "/v1/restaurants/" + helsinki + "/orders"

// fixture: four orders in March 2026 and one in February for Helsinki (day
// starts 04:00), one for another restaurant with the same item names.
func fixture(e *env) {
	e.ingest(
		order(helsinki, "o1", hel(2026, 3, 10, 12, 0), set("restaurantOrderNumber", 101)),
		order(helsinki, "o2", hel(2026, 3, 10, 20, 30), set("status", "refunded"), set("paymentMethod", "cash"),
			set("totalAmountMinor", 1000), set("refundAmountMinor", 1000), lineNames("Reindeer Burger", "Fries")),
		order(helsinki, "o3", hel(2026, 3, 11, 2, 30), set("status", "voided"), set("paymentMethod", "manual"),
			set("orderOrigin", map[string]any{"kind": "marketplace", "provider": "wolt"}), set("orderType", "takeaway"),
			set("tableNumber", nil), set("totalAmountMinor", 5000), lineNames("Pizza Margherita", "Cola")),
		order(helsinki, "o4", hel(2026, 3, 12, 9, 15), set("status", "partially_refunded"), set("paymentMethod", "online"),
			set("totalAmountMinor", 300), lineNames("Coffee", "Cinnamon Bun")),
		order(helsinki, "o5", hel(2026, 2, 1, 12, 0)),
		order(other, "x1", hel(2026, 3, 10, 12, 0)),
	)
}

func TestSearchFilters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fixture(e)
	const dates = "start_date=2026-03-10&end_date=2026-03-12"
	cases := []struct {
		query string
		want  []string
	}{
		{"", []string{"o4", "o3", "o2", "o1", "o5"}},
		{"order_id=o5", []string{"o5"}},
		{"order_id=x1", nil},
		{"status=any", []string{"o4", "o3", "o2", "o1", "o5"}},
		{dates, []string{"o4", "o3", "o2", "o1"}},
		{dates + "&order_id=o2", []string{"o2"}},
		{dates + "&order_id=o5", nil},
		{dates + "&receipt_reference=rh-o3", []string{"o3"}},
		{dates + "&restaurant_order_number=101", []string{"o1"}},
		{dates + "&item_name=SALMON", []string{"o1"}},
		{dates + "&item_name=" + url.QueryEscape("n bu"), []string{"o4"}},
		{dates + "&item_name=burg", []string{"o2"}},
		{dates + "&item_name=%25", nil},
		{dates + "&payment_method=wolt", []string{"o3"}},
		{dates + "&payment_method=manual", nil},
		{dates + "&payment_method=cash", []string{"o2"}},
		{dates + "&status=refunded", []string{"o2"}},
		{dates + "&status=voided", []string{"o3"}},
		{dates + "&status=partially_refunded", []string{"o4"}},
		{dates + "&status=paid", []string{"o1"}},
		{dates + "&status=any", []string{"o4", "o3", "o2", "o1"}},
		{dates + "&min_total_minor=1000&max_total_minor=2480", []string{"o2", "o1"}},
		{dates + "&min_total_minor=2481", []string{"o3"}},
		{dates + "&max_total_minor=300", []string{"o4"}},
		{dates + "&start_time=20:00&end_time=03:00", []string{"o3", "o2"}},
		{dates + "&start_time=09:00&end_time=12:00", []string{"o4", "o1"}},
		{dates + "&start_time=12:01", []string{"o2"}},
		{dates + "&end_time=02:30", []string{"o3"}},
		{dates + "&item_name=salmon&payment_method=card&status=paid&min_total_minor=2000&start_time=11:00&end_time=13:00", []string{"o1"}},
		{dates + "&item_name=salmon&status=refunded", nil},
		{"start_date=2026-03-10&end_date=2026-03-10", []string{"o3", "o2", "o1"}},
		{"start_date=2026-03-11&end_date=2026-03-11", nil},
		{"start_date=2026-01-15&end_date=2026-02-14&item_name=soup", []string{"o5"}},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			if got := e.page(base+"?"+c.query, helsinki).ids(); !slices.Equal(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestSearchScopeAndPeriod(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fixture(e)
	a := e.search(base, helsinki)
	if d := a.Data; d.SearchScope != "all_history" || d.Period != nil || d.Currency != "EUR" || d.RestaurantID != helsinki {
		t.Fatalf("all history page: %s", a.Raw)
	}
	if a := e.search(base+"?order_id=o1", helsinki); a.Data.SearchScope != "all_history" {
		t.Fatalf("order_id alone searches all history, got %s", a.Raw)
	}
	a = e.search(base+"?start_date=2026-03-01&end_date=2026-03-31&status=paid", helsinki)
	if a.Status != http.StatusOK {
		t.Fatalf("31 days: %d %s", a.Status, a.Raw)
	}
	if p := a.Data.Period; a.Data.SearchScope != "date_range" || p == nil || p.StartDate != "2026-03-01" || p.EndDate != "2026-03-31" ||
		p.TimeZone != "Europe/Helsinki" || p.DayStartHour != 4 {
		t.Fatalf("date range page: %s", a.Raw)
	}
}

func TestSearchBounds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const dates = "start_date=2026-03-10&end_date=2026-03-12&"
	long := func(n int) string { return strings.Repeat("a", n) }
	cases := []struct{ query, param string }{
		{"order_id=" + long(256), "order_id"},
		{"order_id=", "order_id"},
		{"order_id=a&order_id=b", "order_id"},
		{dates + "receipt_reference=" + long(256), "receipt_reference"},
		{dates + "receipt_reference=", "receipt_reference"},
		{dates + "restaurant_order_number=0", "restaurant_order_number"},
		{dates + "restaurant_order_number=-3", "restaurant_order_number"},
		{dates + "restaurant_order_number=abc", "restaurant_order_number"},
		{dates + "item_name=" + long(101), "item_name"},
		{dates + "payment_method=bitcoin", "payment_method"},
		{dates + "status=open", "status"},
		{dates + "min_total_minor=-1", "min_total_minor"},
		{dates + "max_total_minor=1.5", "max_total_minor"},
		{dates + "min_total_minor=10&max_total_minor=5", "max_total_minor"},
		{dates + "start_time=24:00", "start_time"},
		{dates + "end_time=9:00", "end_time"},
		{dates + "start_time=12:60", "start_time"},
		{"start_date=2026-3-01&end_date=2026-03-02", "start_date"},
		{"start_date=2026-02-28&end_date=2026-02-30", "end_date"},
		{"start_date=2026-03-01", "end_date"},
		{"end_date=2026-03-01", "start_date"},
		{"start_date=2026-03-01&end_date=2026-04-01", "end_date"},
		{"start_date=2026-03-02&end_date=2026-03-01", "end_date"},
		{"cursor=" + long(1025), "cursor"},
		{"cursor=", "cursor"},
		{"limit=0", "limit"},
		{"limit=21", "limit"},
		{"limit=ten", "limit"},
		{"foo=bar", "foo"},
		{"organization_id=not-a-uuid", "organization_id"},
		{"status=paid", "status"},
		{"item_name=soup", "item_name"},
		{"order_id=o1&payment_method=card", "payment_method"},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			a := e.search(base+"?"+c.query, helsinki)
			if a.Status != http.StatusBadRequest || a.Error != "invalid_request" {
				t.Fatalf("status %d: %s", a.Status, a.Raw)
			}
			if !strings.Contains(a.Message, c.param) {
				t.Fatalf("message %q does not name %s", a.Message, c.param)
			}
			if a.RequestID == "" {
				t.Fatal("no request_id")
			}
		})
	}
	for _, ok := range []string{"limit=1", "limit=20", "order_id=" + long(255), "start_date=2026-03-01&end_date=2026-03-31&item_name=" + long(100),
		"start_date=2026-03-01&end_date=2026-03-01&restaurant_order_number=1&min_total_minor=0&max_total_minor=0&start_time=00:00&end_time=23:59",
		"organization_id=0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2aff"} {
		if a := e.search(base+"?"+ok, helsinki); a.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", ok, a.Status, a.Raw)
		}
	}
}

func TestCursorPagesNeitherSkipNorRepeat(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	start := hel(2026, 3, 10, 10, 0)
	var recs []rec
	var want []string
	for i := range 25 {
		// pairs share an instant so the order id breaks ties
		at := start.Add(time.Duration(i/2) * time.Minute)
		id := "p" + string(rune('a'+i))
		recs = append(recs, order(helsinki, id, at))
		want = append(want, id)
	}
	e.ingest(recs...)
	for qi, q := range []string{"limit=10", "limit=7&start_date=2026-03-10&end_date=2026-03-10&item_name=soup"} {
		prefix := "new" + string(rune('a'+qi)) + "-"
		seen := map[string]bool{}
		var got []string
		next := ""
		for page := 0; ; page++ {
			path := base + "?" + q
			if next != "" {
				path += "&cursor=" + url.QueryEscape(next)
			}
			a := e.search(path, helsinki)
			if a.Status != http.StatusOK {
				t.Fatalf("page %d: %d %s", page, a.Status, a.Raw)
			}
			for _, id := range a.Data.ids() {
				if seen[id] {
					t.Fatalf("%s repeated", id)
				}
				seen[id] = true
				got = append(got, id)
			}
			if a.Data.NextCursor == nil {
				if a.Data.Truncated {
					t.Fatal("last page says truncated")
				}
				break
			}
			next = *a.Data.NextCursor
			if len(next) > 1024 {
				t.Fatal("cursor too long")
			}
			// a newer order arrives between pages: it must not shift the pages
			e.ingest(order(helsinki, prefix+string(rune('a'+page)), start.Add(time.Hour)))
		}
		for _, id := range want {
			if !seen[id] {
				t.Fatalf("%s: %s skipped (got %v)", q, id, got)
			}
		}
		for i := range got {
			if strings.HasPrefix(got[i], prefix) {
				t.Fatalf("%s: an order inserted after the first page appeared: %v", q, got)
			}
		}
	}
}

func TestCursorTamperedOrRebound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fixture(e)
	first := e.search(base+"?limit=1&start_date=2026-03-10&end_date=2026-03-12", helsinki)
	if first.Data.NextCursor == nil {
		t.Fatalf("no next page: %s", first.Raw)
	}
	next := *first.Data.NextCursor
	tampered := next[:len(next)-2] + "xx"
	if next[len(next)-2:] == "xx" {
		tampered = next[:len(next)-2] + "yy"
	}
	for name, q := range map[string]string{
		"tampered":        "limit=1&start_date=2026-03-10&end_date=2026-03-12&cursor=" + url.QueryEscape(tampered),
		"garbage":         "limit=1&start_date=2026-03-10&end_date=2026-03-12&cursor=abc",
		"other filters":   "limit=1&start_date=2026-03-10&end_date=2026-03-11&cursor=" + url.QueryEscape(next),
		"added filter":    "limit=1&start_date=2026-03-10&end_date=2026-03-12&status=paid&cursor=" + url.QueryEscape(next),
		"dropped filters": "limit=1&cursor=" + url.QueryEscape(next),
	} {
		if a := e.search(base+"?"+q, helsinki); a.Status != http.StatusBadRequest || !strings.Contains(a.Message, "cursor") {
			t.Fatalf("%s: %d %s", name, a.Status, a.Raw)
		}
	}
	// another page size with the same filters is fine
	if a := e.search(base+"?limit=3&start_date=2026-03-10&end_date=2026-03-12&cursor="+url.QueryEscape(next), helsinki); a.Status != http.StatusOK || len(a.Data.Matches) != 3 {
		t.Fatalf("same filters, other limit: %d %s", a.Status, a.Raw)
	}
	// a cursor of another restaurant does not work here
	e.ingest(order(other, "x2", hel(2026, 3, 11, 12, 0)))
	foreign := e.search("/v1/restaurants/"+other+"/orders?limit=1", other)
	if foreign.Data.NextCursor == nil {
		t.Fatalf("no next page: %s", foreign.Raw)
	}
	oc := *foreign.Data.NextCursor
	if a := e.search(base+"?limit=1&cursor="+url.QueryEscape(oc), helsinki); a.Status != http.StatusBadRequest {
		t.Fatalf("foreign cursor: %d", a.Status)
	}
}

func TestBusinessDatesAndDST(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	utc := func(y int, m time.Month, d, h, min int) time.Time { return time.Date(y, m, d, h, min, 0, 0, time.UTC) }
	e.ingest(
		// Helsinki, day starts 04:00
		order(helsinki, "cut-before", hel(2026, 3, 10, 3, 59)),
		order(helsinki, "cut-at", hel(2026, 3, 10, 4, 0)),
		// spring forward 2026-03-29 03:00 EET -> 04:00 EEST
		order(helsinki, "spring-before", utc(2026, 3, 29, 0, 30)), // 02:30 EET
		order(helsinki, "spring-after", utc(2026, 3, 29, 1, 0)),   // 04:00 EEST
		// fall back 2026-10-25 04:00 EEST -> 03:00 EET
		order(helsinki, "fall-repeat", utc(2026, 10, 25, 1, 30)), // 03:30 EET (second time)
		order(helsinki, "fall-start", utc(2026, 10, 25, 2, 0)),   // 04:00 EET
		// New York, day starts 06:00; spring forward 2026-03-08, fall back 2026-11-01
		order(newYork, "ny-spring-before", utc(2026, 3, 8, 9, 30)), // 05:30 EDT
		order(newYork, "ny-spring-after", utc(2026, 3, 8, 10, 0)),  // 06:00 EDT
		order(newYork, "ny-fall-before", utc(2026, 11, 1, 10, 30)), // 05:30 EST
		order(newYork, "ny-fall-after", utc(2026, 11, 1, 11, 0)),   // 06:00 EST
	)
	cases := []struct {
		restaurant, query string
		want              []string
	}{
		{helsinki, "start_date=2026-03-09&end_date=2026-03-09", []string{"cut-before"}},
		{helsinki, "start_date=2026-03-10&end_date=2026-03-10", []string{"cut-at"}},
		{helsinki, "start_date=2026-03-28&end_date=2026-03-28", []string{"spring-before"}},
		{helsinki, "start_date=2026-03-29&end_date=2026-03-29", []string{"spring-after"}},
		{helsinki, "start_date=2026-03-23&end_date=2026-03-31&start_time=02:00&end_time=03:00", []string{"spring-before"}},
		{helsinki, "start_date=2026-03-23&end_date=2026-03-31&start_time=04:00&end_time=04:00", []string{"spring-after"}},
		{helsinki, "start_date=2026-10-24&end_date=2026-10-24", []string{"fall-repeat"}},
		{helsinki, "start_date=2026-10-25&end_date=2026-10-25", []string{"fall-start"}},
		{helsinki, "start_date=2026-10-20&end_date=2026-10-31&start_time=03:30&end_time=03:30", []string{"fall-repeat"}},
		{newYork, "start_date=2026-03-07&end_date=2026-03-07", []string{"ny-spring-before"}},
		{newYork, "start_date=2026-03-08&end_date=2026-03-08", []string{"ny-spring-after"}},
		{newYork, "start_date=2026-03-02&end_date=2026-03-08&start_time=05:00&end_time=05:59", []string{"ny-spring-before"}},
		{newYork, "start_date=2026-10-31&end_date=2026-10-31", []string{"ny-fall-before"}},
		{newYork, "start_date=2026-11-01&end_date=2026-11-01", []string{"ny-fall-after"}},
		{newYork, "start_date=2026-10-26&end_date=2026-11-01&start_time=06:00&end_time=06:00", []string{"ny-fall-after"}},
	}
	for _, c := range cases {
		if got := e.page("/v1/restaurants/"+c.restaurant+"/orders?"+c.query, c.restaurant).ids(); !slices.Equal(got, c.want) {
			t.Errorf("%s %s: got %v, want %v", tenants[c.restaurant].TimeZone, c.query, got, c.want)
		}
	}
	if a := e.search(base+"?order_id=cut-before", helsinki); len(a.Data.Matches) == 0 || a.Data.Matches[0].BusinessDate != "2026-03-09" {
		t.Fatalf("businessDate of 03:59 with day start 04:00: %s", a.Raw)
	}
}

func TestRestaurantIsolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fixture(e)
	// the context authorizes another restaurant than the path names
	if a := e.search(base, other); a.Status != http.StatusNotFound || a.Error != "not_found" {
		t.Fatalf("search of another restaurant: %d %s", a.Status, a.Raw)
	}
	if a := e.details(base+"/o1", other); a.Status != http.StatusNotFound {
		t.Fatalf("details under another restaurant's context: %d", a.Status)
	}
	if a := e.details(base+"/x1", helsinki); a.Status != http.StatusNotFound {
		t.Fatalf("details of another restaurant's order: %d", a.Status)
	}
	if a := e.details(base+"/nope", helsinki); a.Status != http.StatusNotFound {
		t.Fatalf("unknown order: %d", a.Status)
	}
	for _, q := range []string{"", "?order_id=x1", "?start_date=2026-03-10&end_date=2026-03-10&item_name=salmon"} {
		if slices.Contains(e.page(base+q, helsinki).ids(), "x1") {
			t.Fatalf("search %q returned another restaurant's order", q)
		}
	}
}

func TestInternalContextRequired(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, hdr := range []string{"", "v1.k1.e30.AAAA", "garbage"} {
		h := map[string]string{}
		if hdr != "" {
			h["X-Internal-Context"] = hdr
		}
		for _, path := range []string{base, base + "/o1"} {
			status, raw := e.do(http.MethodGet, path, "", nil, h)
			if a := servicetest.Decode[json.RawMessage](t, status, raw); status != http.StatusUnauthorized || a.Error != "invalid_token" {
				t.Fatalf("%s with %q: %d %s", path, hdr, status, raw)
			}
		}
	}
}

func TestDetails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fixture(e)
	if a := e.search(base+"/"+strings.Repeat("z", 256), helsinki); a.Status != http.StatusBadRequest || !strings.Contains(a.Message, "orderId") {
		t.Fatalf("long id: %d %s", a.Status, a.Raw)
	}
	if a := e.details(base+"/o1?foo=1", helsinki); a.Status != http.StatusBadRequest {
		t.Fatalf("unknown parameter: %d", a.Status)
	}
	a := e.details(base+"/o3", helsinki)
	if a.Status != http.StatusOK {
		t.Fatalf("%d %s", a.Status, a.Raw)
	}
	if o := a.Data.Order; o.PaymentMethod != "wolt" || o.TableNumber != nil || o.OrderType != "takeaway" {
		t.Fatalf("manual marketplace settlement: %s", a.Raw)
	}
}

func TestIngestionReplacesAndValidates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.ingest(order(helsinki, "r1", hel(2026, 3, 10, 12, 0)))
	// the same order after a refund of the cake
	e.ingest(order(helsinki, "r1", hel(2026, 3, 10, 12, 0), set("status", "partially_refunded"), set("refundAmountMinor", 800),
		set("refundedItems", []any{map[string]any{"lineId": "r1-l2", "catalogItemId": "c0a1b2c3-0000-4000-8000-000000000002",
			"name": "Lingonberry Cake", "quantity": 1, "amountMinor": 800, "refundedAt": "2026-04-01T09:00:00Z"}}),
		lineNames("Salmon Soup"), set("lines", []any{order(helsinki, "r1", time.Now())["lines"].([]any)[0]})))
	a := e.details(base+"/r1", helsinki)
	if a.Status != http.StatusOK {
		t.Fatalf("%d %s", a.Status, a.Raw)
	}
	if o := a.Data.Order; o.Status != "partially_refunded" || o.RefundAmountMinor != 800 || len(o.Items) != 1 || len(o.RefundedItems) != 1 {
		t.Fatalf("re-sent order not replaced: %s", a.Raw)
	}
	if got := e.page(base, helsinki).ids(); !slices.Equal(got, []string{"r1"}) {
		t.Fatalf("re-sending duplicated the order: %v", got)
	}
	if got := e.page(base+"?start_date=2026-03-10&end_date=2026-03-10&item_name=cake", helsinki).ids(); len(got) != 0 {
		t.Fatalf("old line names still searchable: %v", got)
	}

	// a bad second line stores nothing and names the line and field
	good := ndjson(order(helsinki, "n1", hel(2026, 3, 11, 12, 0)))
	for _, c := range []struct{ body, want string }{
		{good + ndjson(order(helsinki, "n2", hel(2026, 3, 11, 12, 0), set("status", "open"))), "line 2: status"},
		{good + "{not json}\n", "line 2"},
		{good + ndjson(order(helsinki, "n2", hel(2026, 3, 11, 12, 0), set("colour", "red"))), "colour"},
		{good + ndjson(order(helsinki, "n2", hel(2026, 3, 11, 12, 0), set("timeZone", "Mars/Olympus"))), "timeZone"},
		{good + ndjson(order(helsinki, "", hel(2026, 3, 11, 12, 0))), "orderId"},
		{good + ndjson(order(helsinki, "n2", hel(2026, 3, 11, 12, 0), set("totalAmountMinor", "12"))), "totalAmountMinor"},
		{"\n" + good + ndjson(order(helsinki, "n2", hel(2026, 3, 11, 12, 0), set("occurredAt", "yesterday"))), "line 3"},
	} {
		status, raw := e.ingestRaw(c.body)
		if status != http.StatusBadRequest || !strings.Contains(string(raw), c.want) {
			t.Fatalf("want 400 naming %q, got %d %s", c.want, status, raw)
		}
	}
	if a := e.details(base+"/n1", helsinki); a.Status != http.StatusNotFound {
		t.Fatal("a rejected batch stored its valid lines")
	}
	status, raw := e.do(http.MethodPost, "/internal/v1/orders/ingest", "", strings.NewReader(good), map[string]string{"Authorization": "Bearer wrong"})
	if status != http.StatusUnauthorized {
		t.Fatalf("wrong ingest token: %d %s", status, raw)
	}
}

func TestGolden(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.ingest(order(helsinki, "gold-1", hel(2026, 3, 10, 12, 0), set("restaurantOrderNumber", 4711), set("tipAmountMinor", 200),
		set("discountAmountMinor", 120), set("originalAmountMinor", 2600),
		set("refundedItems", []any{map[string]any{"lineId": "gold-1-l2", "catalogItemId": "c0a1b2c3-0000-4000-8000-000000000002",
			"name": "Lingonberry Cake", "quantity": 1, "amountMinor": 800, "refundedAt": "2026-04-01T09:00:00Z"}}),
		set("status", "partially_refunded"), set("refundAmountMinor", 800)))
	for name, path := range map[string]string{
		"summary.json": base + "?order_id=gold-1",
		"details.json": base + "/gold-1",
	} {
		status, raw := e.do(http.MethodGet, path, helsinki, nil, nil)
		if status != http.StatusOK {
			t.Fatalf("%s: %d %s", path, status, raw)
		}
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, raw, "", "  "); err != nil {
			t.Fatal(err)
		}
		pretty.WriteByte('\n')
		file := filepath.Join("..", "..", "testdata", name)
		if *update {
			if err := os.WriteFile(file, pretty.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("%v (run go test -update once)", err)
		}
		if !bytes.Equal(want, pretty.Bytes()) {
			t.Errorf("%s differs from %s:\n%s", path, file, pretty.String())
		}
	}
}

// Beyond the newest candidates the item search goes through the item index;
// both paths and paging across them give the same answers.
func TestItemNameOverManyOrders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	start := hel(2026, 3, 1, 12, 0)
	var recs []rec
	for i := range 600 {
		names := []string{"Coffee", "Cinnamon Bun"}
		if i%150 == 7 {
			names = []string{"Pickled Herring", "Coffee"}
		}
		recs = append(recs, order(helsinki, fmt.Sprintf("m%03d", i), start.Add(time.Duration(i)*time.Minute), lineNames(names...)))
	}
	e.ingest(recs...)
	const dates = "start_date=2026-03-01&end_date=2026-03-02"
	rare := e.page(base+"?"+dates+"&item_name=HERRING&limit=3", helsinki)
	if got := rare.ids(); !slices.Equal(got, []string{"m457", "m307", "m157"}) || rare.NextCursor == nil {
		t.Fatalf("rare item: %v, next %v", got, rare.NextCursor)
	}
	next := *rare.NextCursor
	if a := e.search(base+"?"+dates+"&item_name=HERRING&limit=3&cursor="+url.QueryEscape(next), helsinki); !slices.Equal(a.Data.ids(), []string{"m007"}) || a.Data.NextCursor != nil {
		t.Fatalf("rare item, second page: %s", a.Raw)
	}
	if got := e.page(base+"?"+dates+"&item_name=bun&limit=2", helsinki).ids(); !slices.Equal(got, []string{"m599", "m598"}) {
		t.Fatalf("common item: %v", got)
	}
	if got := e.page(base+"?"+dates+"&item_name=sushi", helsinki).ids(); len(got) != 0 {
		t.Fatalf("unknown item: %v", got)
	}
	// a name only another restaurant sold
	e.ingest(order(other, "y1", start, lineNames("Sushi Roll")))
	if got := e.page(base+"?"+dates+"&item_name=sushi", helsinki).ids(); len(got) != 0 {
		t.Fatalf("another restaurant's item: %v", got)
	}
}

// Bad records are refused with 400 invalid_request naming the line and the
// field, and the request stores nothing.
func TestIngestionRefusesBadRecords(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	at := hel(2026, 3, 11, 12, 0)
	good := ndjson(order(helsinki, "n1", at))
	line := func(opts ...func(rec)) string { return ndjson(order(helsinki, "n2", at, opts...)) }
	firstLine := func(k string, v any) func(rec) {
		return func(r rec) { r["lines"].([]any)[0].(map[string]any)[k] = v }
	}
	option := func(k string, v any) func(rec) {
		return func(r rec) {
			r["lines"].([]any)[0].(map[string]any)["selectedOptions"].([]any)[0].(map[string]any)[k] = v
		}
	}
	vatRow := func(k string, v any) func(rec) {
		return func(r rec) { r["vatRows"].([]any)[1].(map[string]any)[k] = v }
	}
	payment := func(k string, v any) func(rec) {
		return func(r rec) { r["paymentReferences"].([]any)[0].(map[string]any)[k] = v }
	}
	refunded := set("refundedItems", []any{map[string]any{"lineId": "n2-l1", "catalogItemId": nil, "name": "Salmon Soup",
		"quantity": -1, "amountMinor": 100, "refundedAt": "2026-03-12T09:00:00Z"}})
	cases := []struct{ body, want string }{
		{good + strings.TrimSuffix(line(), "\n") + ` {"orderId":"n3"}` + "\n", "line 2: unexpected data after the JSON object"},
		{good + line(firstLine("taxEvidence", "guess")), "line 2: lines[0].taxEvidence: must be one of snapshot, legacy, unknown"},
		{good + strings.Replace(line(), "Salmon Soup", "Salmon \xff Soup", 1), "line 2: lines[0].name: must be valid UTF-8 text without NUL characters"},
		{good + line(firstLine("name", "Salmon\x00Soup")), "line 2: lines[0].name: must be valid UTF-8 text without NUL characters"},
		{good + line(set("orderId", "n\x002")), "line 2: orderId: must be valid UTF-8 text without NUL characters"},
		{good + line(payment("transactionId", "tx\x00")), "line 2: paymentReferences[0].transactionId: must be valid UTF-8"},
		{good + line(firstLine("quantity", -1)), "line 2: lines[0].quantity: must be ≥ 0"},
		{good + line(firstLine("unitPriceMinor", -1680)), "line 2: lines[0].unitPriceMinor: must be ≥ 0"},
		{good + line(option("quantity", -1)), "line 2: lines[0].selectedOptions[0].quantity: must be ≥ 0"},
		{good + line(vatRow("vatAmountMinor", -137)), "line 2: vatRows[1].vatAmountMinor: must be ≥ 0"},
		{good + line(payment("recordedAmountMinor", -2480)), "line 2: paymentReferences[0].recordedAmountMinor: must be ≥ 0"},
		{good + line(refunded), "line 2: refundedItems[0].quantity: must be ≥ 0"},
		{good + line(firstLine("quantity", 1<<40)), "line 2: lines[0].quantity: must be ≤ 2147483647"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			status, raw := e.ingestRaw(c.body)
			if a := servicetest.Decode[json.RawMessage](t, status, raw); status != http.StatusBadRequest || a.Error != "invalid_request" || !strings.HasPrefix(a.Message, c.want) {
				t.Fatalf("want 400 invalid_request %q, got %d %s", c.want, status, raw)
			}
			if a := e.details(base+"/n1", helsinki); a.Status != http.StatusNotFound {
				t.Fatal("a refused request stored its valid line")
			}
		})
	}
}

// Text that the database cannot hold is refused, naming the parameter,
// before any query (by the HTTP layer of pkg/httpx; the domain's own check
// is covered by its unit tests); so are integers out of range and long date spans,
// with what was wrong.
func TestSearchAndDetailsRefuseInvalidText(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const dates = "start_date=2026-03-10&end_date=2026-03-12&"
	for _, c := range []struct{ path, want string }{
		{"?order_id=a%00b", "Query parameter order_id is not valid text"},
		{"?order_id=%ff%fe", "Query parameter order_id is not valid text"},
		{"?order_id=%c3%28", "Query parameter order_id is not valid text"},
		{"?order_id=%ed%a0%80", "Query parameter order_id is not valid text"},
		{"?order_id=%c0%af", "Query parameter order_id is not valid text"},
		{"?" + dates + "receipt_reference=%00", "Query parameter receipt_reference is not valid text"},
		{"?" + dates + "item_name=%ff", "Query parameter item_name is not valid text"},
		{"/a%00b", "Path parameter orderId is not valid text"},
		{"/%ff%fe", "Path parameter orderId is not valid text"},
		{"/%c3%28", "Path parameter orderId is not valid text"},
		{"/%ed%a0%80", "Path parameter orderId is not valid text"},
		{"/%c0%af", "Path parameter orderId is not valid text"},
		{"/" + strings.Repeat("z", 256), "orderId must be 1 to 255 characters."},
		{"/" + strings.Repeat("%C3%A9", 256), "orderId must be 1 to 255 characters."},
		{"?limit=99999999999999999999", "limit is out of range: it must be an integer from 1 to 20."},
		{"?" + dates + "restaurant_order_number=99999999999999999999", "restaurant_order_number is out of range: it must be an integer from 1 to 9223372036854775807."},
		{"?" + dates + "min_total_minor=9223372036854775808", "min_total_minor is out of range"},
		{"?" + dates + "max_total_minor=99999999999999999999", "max_total_minor is out of range"},
		{"?start_date=0001-01-01&end_date=9999-12-31", "The date range covers 3652059 days; it may cover at most 31 days"},
		{"?start_date=0000-01-01&end_date=0000-01-01", "start_date must be a date written YYYY-MM-DD"},
		// Messages name the request's own words, never the code's.
		{"?status=paid", "status needs start_date and end_date"},
		{"?item_name=soup", "item_name needs start_date and end_date"},
		{"?min_total_minor=1", "min_total_minor needs start_date and end_date"},
	} {
		if a := e.search(base+c.path, helsinki); a.Status != http.StatusBadRequest || a.Error != "invalid_request" || !strings.HasPrefix(a.Message, c.want) {
			t.Fatalf("%s: want 400 %q, got %d %s", c.path, c.want, a.Status, a.Raw)
		}
	}
	if a := e.details(base+"/"+strings.Repeat("%C3%A9", 255), helsinki); a.Status != http.StatusNotFound {
		t.Fatalf("a 255-character id: %d %s", a.Status, a.Raw)
	}
}
