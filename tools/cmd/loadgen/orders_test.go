package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/tools/seed"
)

// The larger data set answers the smaller one's very requests, on its own
// restaurant records, and refuses a restaurant it does not have.
func TestSameCallsMapsRequestsByRestaurant(t *testing.T) {
	small := []*restaurant{{Restaurant: seed.Restaurant{RestaurantID: "a", Name: "A"}}, {Restaurant: seed.Restaurant{RestaurantID: "b", Name: "B"}}}
	large := []*restaurant{{Restaurant: seed.Restaurant{RestaurantID: "b"}}, {Restaurant: seed.Restaurant{RestaurantID: "c"}}, {Restaurant: seed.Restaurant{RestaurantID: "a"}}}
	classes := []*class{{name: "order_id", calls: []call{{small[0], "/orders?order_id=1"}, {small[1], "/orders?order_id=2"}}}, {name: "details", details: true, calls: []call{{small[1], "/orders/2"}}}}

	got, err := sameCalls(classes, large)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].name != "order_id" || !got[1].details || got[0].via == nil {
		t.Fatalf("classes %+v", got)
	}
	want := []call{{large[2], "/orders?order_id=1"}, {large[0], "/orders?order_id=2"}}
	for i, c := range got[0].calls {
		if c != want[i] {
			t.Fatalf("call %d = %+v on %p, want %+v on %p", i, c, c.r, want[i], want[i].r)
		}
	}
	if got[1].calls[0] != (call{large[0], "/orders/2"}) {
		t.Fatalf("details call %+v", got[1].calls[0])
	}

	if _, err := sameCalls(classes, large[:2]); err == nil || !strings.Contains(err.Error(), "restaurant A") {
		t.Fatalf("a restaurant missing from the larger set: %v", err)
	}
}

// The change table says NO for a class whose p99 grows more than 20% at the
// service or through the gateway, and yes otherwise.
func TestReportChangeJudgesEachClassAt20Percent(t *testing.T) {
	side := func(orders int64, p99 map[string][2]time.Duration) *ordersSide {
		s := &ordersSide{e: &benchEnv{orders: orders}}
		for _, name := range []string{"flat", "service grows", "gateway grows", "faster"} {
			cl := &class{name: name, via: map[string]*classRun{}}
			for i, via := range []string{"service", "gateway"} {
				// 100 answers of 1 ms and the slowest ones at the p99 asked.
				run := &classRun{}
				for range 98 {
					run.lat = append(run.lat, time.Millisecond)
				}
				run.lat = append(run.lat, p99[name][i], p99[name][i])
				cl.via[via] = run
			}
			s.classes = append(s.classes, cl)
		}
		return s
	}
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	small := side(1_000_000, map[string][2]time.Duration{
		"flat": {ms(10), ms(10)}, "service grows": {ms(10), ms(10)}, "gateway grows": {ms(10), ms(10)}, "faster": {ms(10), ms(10)}})
	large := side(5_000_000, map[string][2]time.Duration{
		"flat": {ms(12), ms(11.9)}, "service grows": {ms(12.1), ms(10)}, "gateway grows": {ms(10), ms(12.5)}, "faster": {ms(5), ms(5)}})

	var out bytes.Buffer
	reportChange(&out, small, large)
	verdict := map[string]string{}
	for line := range strings.Lines(out.String()) {
		f := strings.Fields(line)
		if len(f) > 0 {
			verdict[strings.Join(f[:max(len(f)-7, 0)], " ")] = f[len(f)-1]
		}
	}
	want := map[string]string{"flat": "yes", "service grows": "NO", "gateway grows": "NO", "faster": "yes"}
	for name, v := range want {
		if verdict[name] != v {
			t.Errorf("%s: %q, want %q\n%s", name, verdict[name], v, out.String())
		}
	}
	if !strings.Contains(out.String(), "5.0M against 1.0M") {
		t.Errorf("heading:\n%s", out.String())
	}
}

// A compared data set below 1M orders, or not smaller, is refused before
// anything starts: its restaurants would not share the larger one's histories.
func TestCompareOrdersMustBeSmallerAndAtLeastOneMillion(t *testing.T) {
	for _, args := range [][]string{
		{"-orders", "5000000", "-compare-orders", "200000"},
		{"-orders", "5000000", "-compare-orders", "5000000"},
	} {
		if err := runOrders(t.Context(), args); err == nil || !strings.Contains(err.Error(), "-compare-orders") {
			t.Errorf("%v: %v", args, err)
		}
	}
}
