package seed

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi.dev/services/contracts"
)

func generateDemoOrders(t *testing.T, seed uint64) []byte {
	t.Helper()
	g := Generator{Seed: seed}
	var buf bytes.Buffer
	var last int
	err := g.GenerateOrders(g.GenerateDirectory(SizeDemo), SizeDemo, &buf, func(done, total int) {
		if done < last || done > total {
			t.Errorf("progress went from %d to %d of %d", last, done, total)
		}
		last = done
	})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestOrdersAreDeterministic(t *testing.T) {
	a := generateDemoOrders(t, 7)
	b := generateDemoOrders(t, 7)
	c := generateDemoOrders(t, 8)
	if !bytes.Equal(a, b) {
		t.Fatal("same seed gave different NDJSON")
	}
	if bytes.Equal(a, c) {
		t.Fatal("different seeds gave the same NDJSON")
	}
}

func TestOrdersShape(t *testing.T) {
	g := Generator{Seed: 1}
	d := g.GenerateDirectory(SizeDemo)
	raw := generateDemoOrders(t, 1)
	restaurants := map[string]Restaurant{}
	for _, r := range d.Restaurants {
		restaurants[r.RestaurantID] = r
	}
	var n int
	seenIDs := map[string]bool{}
	count := map[string]int{}
	lastNumber := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		var o contracts.OrderRecord
		if err := dec.Decode(&o); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		r, ok := restaurants[o.RestaurantID]
		if !ok || r.TimeZone != o.TimeZone || r.Currency != o.Currency || o.DayStartHour == nil || *r.DayStartHour != *o.DayStartHour {
			t.Fatalf("line %d: restaurant settings do not match the directory", n)
		}
		if seenIDs[o.OrderID] || len(o.OrderID) < 1 || len(o.OrderID) > 255 {
			t.Fatalf("line %d: order id %q repeated or too long", n, o.OrderID)
		}
		seenIDs[o.OrderID] = true
		if o.RestaurantOrderNumber <= lastNumber[o.RestaurantID] {
			t.Fatalf("line %d: restaurant order numbers must run upwards", n)
		}
		lastNumber[o.RestaurantID] = o.RestaurantOrderNumber
		if o.OccurredAt == nil {
			t.Fatalf("line %d: no occurredAt", n)
		}
		at := *o.OccurredAt
		loc, _ := time.LoadLocation(o.TimeZone)
		local := at.In(loc)
		var lineSum, vatSum, discount int64
		for _, l := range o.Lines {
			lineSum += l.GrossAmountMinor
			vatSum += l.VatAmountMinor
			discount += l.DiscountAmountMinor
		}
		if lineSum != o.TotalAmountMinor || vatSum != o.VatMinor || discount != o.DiscountAmountMinor || o.OriginalAmountMinor != o.TotalAmountMinor+discount {
			t.Fatalf("line %d: amounts do not add up: %+v", n, o)
		}
		var rowGross int64
		for _, v := range o.VatRows {
			rowGross += v.GrossAmountMinor
			if v.NetAmountMinor+v.VatAmountMinor != v.GrossAmountMinor {
				t.Fatalf("line %d: VAT row does not add up", n)
			}
		}
		if rowGross != o.TotalAmountMinor {
			t.Fatalf("line %d: VAT rows do not cover the total", n)
		}
		for _, p := range o.PaymentReferences {
			if p.ReceiptHash == nil || *p.ReceiptHash != o.ReceiptHash || p.RecordedAmountMinor != o.TotalAmountMinor+o.TipAmountMinor {
				t.Fatalf("line %d: payment reference inconsistent with the receipt", n)
			}
		}
		count["status:"+o.Status]++
		count["method:"+o.PaymentMethod]++
		count["type:"+o.OrderType]++
		if o.PaymentMethod == "manual" && o.OrderOrigin.Provider != nil {
			count["manual marketplace"]++
		}
		if o.TipAmountMinor > 0 {
			count["tip"]++
		}
		if o.DiscountAmountMinor > 0 {
			count["discount"]++
		}
		for _, l := range o.Lines {
			if len(l.SelectedOptions) > 0 {
				count["options"]++
			}
			count["evidence:"+l.TaxEvidence]++
			if o.Country == "FI" && l.VatRates[0].Category == "standard" && l.VatRates[0].RateBps == 2550 {
				count["FI 25.5"]++
			}
			if o.Country == "SE" && l.VatRates[0].RateBps == 1200 {
				count["SE 12"]++
			}
		}
		for _, ri := range o.RefundedItems {
			if ri.RefundedAt.In(loc).Month() != local.Month() {
				count["refund in a later month"]++
			}
		}
		// within an hour before the next business day starts
		if h := local.Hour(); h == (*o.DayStartHour+23)%24 {
			count["near cutoff"]++
		}
		if o.TimeZone == "America/New_York" && local.Format("2006-01-02") == "2026-11-01" {
			count["US DST day"]++
		}
		if o.TimeZone == "Europe/Helsinki" && local.Format("2006-01-02") == "2026-10-25" {
			count["EU DST day"]++
		}
	}
	if n < 2000 || n > 10000 {
		t.Fatalf("demo size has %d orders, want a few thousand", n)
	}
	for _, k := range []string{"status:paid", "status:partially_refunded", "status:refunded", "status:voided",
		"method:card", "method:cash", "method:online", "method:manual", "method:wolt", "method:foodora", "method:uber_eats",
		"type:dine_in", "type:takeaway", "type:delivery", "manual marketplace", "tip", "discount", "options",
		"evidence:snapshot", "evidence:unknown", "FI 25.5", "SE 12", "refund in a later month", "near cutoff",
		"US DST day", "EU DST day"} {
		if count[k] == 0 {
			t.Errorf("no order with %s (counts %v)", k, count)
		}
	}
}

func TestBenchPlanCounts(t *testing.T) {
	g := Generator{Seed: 1}
	demo, err := g.orderPlans(g.GenerateDirectory(SizeDemo), SizeDemo)
	if err != nil {
		t.Fatal(err)
	}
	bench, err := g.orderPlans(g.GenerateDirectory(SizeBench), SizeBench)
	if err != nil {
		t.Fatal(err)
	}
	sum := func(ps []orderPlan) (n int) {
		for _, p := range ps {
			n += p.count
		}
		return n
	}
	if len(bench) != len(demo)+BenchRestaurants || sum(bench) != sum(demo)+BenchOrders {
		t.Fatalf("bench plans %d orders over %d restaurants, want %d demo + %d bench", sum(bench), len(bench), sum(demo), BenchOrders)
	}
}

// The bench size takes another order count; the demo restaurants keep theirs.
// Past BenchOrders, the bench grows in restaurants, each keeping the history
// of a 1M-order bench restaurant.
func TestBenchPlanOrderCount(t *testing.T) {
	for _, c := range []struct{ orders, restaurants int }{{2_000, 20}, {1_000_000, 20}, {5_000_000, 100}, {10_000_019, 201}} {
		n := c.orders
		g := Generator{Seed: 1, BenchOrderCount: n}
		demo, err := g.orderPlans(g.GenerateDirectory(SizeDemo), SizeDemo)
		if err != nil {
			t.Fatal(err)
		}
		bench, err := g.orderPlans(g.GenerateDirectory(SizeBench), SizeBench)
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for _, p := range bench[len(demo):] {
			got += p.count
		}
		if len(bench)-len(demo) != c.restaurants || got != n {
			t.Fatalf("bench plans %d orders over %d bench restaurants, want %d over %d", got, len(bench)-len(demo), n, c.restaurants)
		}
		for _, p := range bench[len(demo):] {
			if n > BenchOrders && p.count > OrdersPerBenchRestaurant {
				t.Fatalf("bench restaurant %s has %d orders, more than %d", p.r.Name, p.count, OrdersPerBenchRestaurant)
			}
		}
	}
}

func TestLoadOrdersBatches(t *testing.T) {
	var mu sync.Mutex
	var lines, posts int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/internal/v1/orders/ingest" || r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, `{"error":"invalid_token"}`, http.StatusUnauthorized)
			return
		}
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		posts++
		lines += bytes.Count(body, []byte("\n"))
		mu.Unlock()
		_, _ = w.Write([]byte(`{"data":{}}`))
	}))
	defer srv.Close()
	raw := generateDemoOrders(t, 3)
	if err := (Client{}).LoadOrders(context.Background(), srv.URL+"/", "tok", bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	if want := bytes.Count(raw, []byte("\n")); lines != want || posts < 2 {
		t.Fatalf("posted %d lines in %d requests, want %d lines in several", lines, posts, want)
	}
	err := (Client{}).LoadOrders(context.Background(), srv.URL, "wrong", strings.NewReader(`{"orderId":"x"}`))
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("want the service's refusal, got %v", err)
	}
}

// appendOrderJSON writes what json.Encoder (HTML unescaped) writes, for
// generated orders and for strings that need escaping.
func TestAppendOrderJSONMatchesEncoder(t *testing.T) {
	check := func(o contracts.OrderRecord) {
		t.Helper()
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(o); err != nil {
			t.Fatal(err)
		}
		if got := appendOrderJSON(nil, &o); string(got) != want.String() {
			t.Fatalf("got  %s\nwant %s", got, want.String())
		}
	}
	g := Generator{Seed: 42}
	r := g.GenerateDirectory(SizeDemo).Restaurants[0]
	rnd := g.Rand("appendOrderJSON")
	cat := g.catalogFor(r)
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	for i := range 2000 {
		check(g.order(rnd, r, cat, int64(1000+i), at.Add(time.Duration(i)*time.Minute)))
	}
	o := g.order(rnd, r, cat, 1, at)
	for _, s := range []string{"Crème \"brûlée\" <b>&", "tab\there\n\u2028\u2029", "bad \xff utf8", "\x00\x1f\x7f", ""} {
		o.Lines[0].Name = s
		o.OrderOrigin.Provider = &s
		check(o)
	}
	o.Lines, o.VatRows, o.TableNumber = nil, nil, nil
	check(o)
	o.OrderOrigin, o.OccurredAt, o.DayStartHour, o.TaxRatesAsOf = nil, nil, nil, nil
	check(o)
}

// TestOrderRecordsMatchTheContract holds every line the seed writes to the
// type the orders service decodes: no field the contract lacks (a strict
// decode), and none of the contract's fields left out.
func TestOrderRecordsMatchTheContract(t *testing.T) {
	sc := bufio.NewScanner(bytes.NewReader(generateDemoOrders(t, 3)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		var o contracts.OrderRecord
		if err := dec.Decode(&o); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		again, _ := json.Marshal(o)
		var sent, declared map[string]any
		_ = json.Unmarshal(sc.Bytes(), &sent)
		_ = json.Unmarshal(again, &declared)
		if a, b := slices.Sorted(maps.Keys(sent)), slices.Sorted(maps.Keys(declared)); !slices.Equal(a, b) {
			t.Fatalf("line %d: fields sent %v, fields in the contract %v", n, a, b)
		}
	}
}
