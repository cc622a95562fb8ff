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
// service or through the gateway in the median round, and yes otherwise: a
// round in which the larger data set met a stall moves the range, not the
// verdict.
func TestReportChangeJudgesEachClassAt20Percent(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	// Each class's p99 in each of three rounds, at the service and through
	// the gateway.
	side := func(orders int64, p99 map[string][2][3]float64) *ordersSide {
		s := &ordersSide{e: &benchEnv{orders: orders}}
		for _, name := range []string{"flat", "service grows", "gateway grows", "faster", "one round stalls"} {
			cl := &class{name: name, via: map[string]*classRun{}}
			for i, via := range []string{"service", "gateway"} {
				// Per round 100 answers of 1 ms, the slowest two at the
				// round's p99.
				run := &classRun{}
				for _, p := range p99[name][i] {
					for range 98 {
						run.lat = append(run.lat, time.Millisecond)
					}
					run.lat = append(run.lat, ms(p), ms(p))
					run.ends = append(run.ends, len(run.lat))
				}
				cl.via[via] = run
			}
			s.classes = append(s.classes, cl)
		}
		return s
	}
	ten := [2][3]float64{{10, 10, 10}, {10, 10, 10}}
	small := side(1_000_000, map[string][2][3]float64{"flat": ten, "service grows": ten, "gateway grows": ten, "faster": ten, "one round stalls": ten})
	large := side(5_000_000, map[string][2][3]float64{
		"flat":             {{12, 11, 11.9}, {11.9, 11, 12}},
		"service grows":    {{12.1, 13, 12.5}, {10, 10, 10}},
		"gateway grows":    {{10, 10, 10}, {12.5, 12.5, 11}},
		"faster":           {{5, 5, 5}, {5, 5, 5}},
		"one round stalls": {{10.5, 16, 11}, {10, 10, 18}},
	})

	var out bytes.Buffer
	reportChange(&out, small, large)
	verdict := map[string]string{}
	for line := range strings.Lines(out.String()) {
		f := strings.Fields(line)
		if len(f) > 9 {
			verdict[strings.Join(f[:len(f)-9], " ")] = f[len(f)-1]
		}
	}
	want := map[string]string{"flat": "yes", "service grows": "NO", "gateway grows": "NO", "faster": "yes", "one round stalls": "yes"}
	for name, v := range want {
		if verdict[name] != v {
			t.Errorf("%s: %q, want %q\n%s", name, verdict[name], v, out.String())
		}
	}
	for _, s := range []string{"5.0M against 1.0M", "median of 3 rounds", "+5…+60%"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("no %q in the report:\n%s", s, out.String())
		}
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

// Within a round, every data set's requests follow the same kind of
// request: in even rounds its service request follows the other data set's
// gateway request and its gateway request its own service request; in odd
// rounds the other way round. So no data set is the one that always wakes
// up after the other's processes ran.
func TestCycleGivesEveryDataSetTheSameNeighbours(t *testing.T) {
	small, large := &ordersSide{}, &ordersSide{}
	name := map[*ordersSide]string{small: "small", large: "large"}
	for r := range 4 {
		steps := cycle([]*ordersSide{small, large}, r)
		if len(steps) != 4 {
			t.Fatalf("round %d: %d steps", r, len(steps))
		}
		// before[side][via] is what the request before it was (the cycle
		// repeats, so the first follows the last): same or other data
		// set, and its target.
		before := map[string]string{}
		for i, st := range steps {
			prev := steps[(i+len(steps)-1)%len(steps)]
			who := "other"
			if prev.side == st.side {
				who = "same"
			}
			before[name[st.side]+" "+st.via] = who + " " + prev.via
		}
		for _, via := range targets {
			if before["small "+via] != before["large "+via] {
				t.Errorf("round %d: %s requests follow %q on the small set and %q on the large one", r, via, before["small "+via], before["large "+via])
			}
		}
		if want := map[bool]string{true: "other gateway", false: "same gateway"}[r%2 == 0]; before["small service"] != want {
			t.Errorf("round %d: a service request follows %q, want %q", r, before["small service"], want)
		}
	}
}
