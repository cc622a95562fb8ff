package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/services/orders/internal/domain"
	"partnerapi.dev/services/orders/internal/store"
)

// manyOrders is a restaurant's month and a half of orders: several an hour,
// every status, totals repeating, line names shared by many orders and a few
// rare ones (two rare names share a word, and some orders have both), 70
// names sharing a word, and 70 more sharing a word only in the oldest
// orders, so every filter matches more orders than a page.
func manyOrders() []domain.Order {
	statuses := []string{"paid", "paid", "paid", "partially_refunded", "refunded", "voided"}
	var orders []domain.Order
	start := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	for i := range 1500 {
		// 43 minutes apart: every minute of the day over the days, and
		// some orders share an instant so the order id breaks the tie.
		at := start.Add(time.Duration(i/3*3*43+i%3) * time.Minute)
		if i%7 == 0 {
			at = start.Add(time.Duration(i/3*3*43) * time.Minute)
		}
		lines := []string{"Soup", "Tea"}
		if i%50 == 0 {
			lines = append(lines, "Gift card")
		}
		if i%35 == 0 {
			lines = append(lines, "GIFT box")
		}
		if i%4 == 1 {
			lines = append(lines, fmt.Sprintf("Special %02d", i/4%70))
		}
		if i < 210 {
			lines = append(lines, fmt.Sprintf("Old %02d", i%70))
		}
		o := sampleOrder(fmt.Sprintf("o-%04d", (i*7919)%1500), statuses[i%len(statuses)], lines...)
		o.OccurredAt = at
		o.BusinessDate = bizdate.FromTime(at)
		o.LocalMinute = at.Hour()*60 + at.Minute()
		o.TotalAmountMinor = int64(1000 + (i*37)%400)
		if i%2 == 0 {
			o.PaymentMethod = "cash"
		}
		orders = append(orders, o)
	}
	return orders
}

// matches is the reference answer: the orders f matches, newest first.
func matches(orders []domain.Order, f domain.Filter) []string {
	var out []domain.Order
	for _, o := range orders {
		m := o.LocalMinute
		var inMinutes bool
		switch {
		case f.StartMinute != nil && f.EndMinute != nil && *f.StartMinute > *f.EndMinute:
			inMinutes = m >= *f.StartMinute || m <= *f.EndMinute
		default:
			inMinutes = (f.StartMinute == nil || m >= *f.StartMinute) && (f.EndMinute == nil || m <= *f.EndMinute)
		}
		hasItem := f.ItemName == nil || slices.ContainsFunc(o.Lines, func(l domain.Line) bool {
			return strings.Contains(strings.ToLower(l.Name), strings.ToLower(*f.ItemName))
		})
		if inMinutes && hasItem &&
			(f.Status == nil || o.Status == *f.Status) &&
			(f.PaymentMethod == nil || o.PaymentMethod == *f.PaymentMethod) &&
			(f.MinTotalMinor == nil || o.TotalAmountMinor >= *f.MinTotalMinor) &&
			(f.MaxTotalMinor == nil || o.TotalAmountMinor <= *f.MaxTotalMinor) &&
			(f.StartDate == nil || !o.OccurredAt.Before(f.From) && o.OccurredAt.Before(f.Until) &&
				!o.BusinessDate.Time().Before(f.StartDate.Time()) && !o.BusinessDate.Time().After(f.EndDate.Time())) {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b domain.Order) int {
		if c := b.OccurredAt.Compare(a.OccurredAt); c != 0 {
			return c
		}
		return strings.Compare(b.OrderID, a.OrderID)
	})
	ids := make([]string, len(out))
	for i, o := range out {
		ids[i] = o.OrderID
	}
	return ids
}

// Every filter class, whichever index answers it, pages through exactly the
// orders it matches, newest first, with no order lost or repeated between
// pages.
func TestSearchPagesMatchEveryFilterClass(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	orders := manyOrders()
	replaceAll(t, s, orders)
	if _, err := s.DB.ExecContext(ctx, "ANALYZE orders, order_item_keys"); err != nil {
		t.Fatal(err)
	}
	str := func(v string) *string { return &v }
	num := func(v int64) *int64 { return &v }
	minute := func(h, m int) *int { v := h*60 + m; return &v }
	window := func(f domain.Filter) domain.Filter {
		from, until := bizdate.FromTime(time.Date(2026, 2, 10, 0, 0, 0, 0, time.UTC)), bizdate.FromTime(time.Date(2026, 3, 12, 0, 0, 0, 0, time.UTC))
		f.StartDate, f.EndDate = &from, &until
		f.From, f.Until = from.Time(), until.Time().AddDate(0, 0, 1)
		return f
	}
	for name, f := range map[string]domain.Filter{
		"no filter":                             {},
		"time window":                           window(domain.Filter{StartMinute: minute(11, 0), EndMinute: minute(14, 30)}),
		"across midnight":                       window(domain.Filter{StartMinute: minute(23, 0), EndMinute: minute(1, 30)}),
		"from a time on":                        window(domain.Filter{StartMinute: minute(20, 0)}),
		"until a time":                          window(domain.Filter{EndMinute: minute(6, 0)}),
		"amount range":                          window(domain.Filter{MinTotalMinor: num(1100), MaxTotalMinor: num(1150)}),
		"amount range, rare":                    {MinTotalMinor: num(1000), MaxTotalMinor: num(1005)},
		"amount range from, status":             window(domain.Filter{MinTotalMinor: num(1300), Status: str("paid")}),
		"status":                                window(domain.Filter{Status: str("refunded")}),
		"status, no window":                     {Status: str("voided")},
		"item_name common":                      window(domain.Filter{ItemName: str("soup")}),
		"item_name rare":                        window(domain.Filter{ItemName: str("gift")}),
		"item_name rare, no window":             {ItemName: str("gift b")},
		"item_name, status":                     window(domain.Filter{ItemName: str("special"), Status: str("paid")}),
		"item_name, method":                     window(domain.Filter{ItemName: str("gift"), PaymentMethod: str("card")}),
		"item_name, amount":                     window(domain.Filter{ItemName: str("pecial 1"), MinTotalMinor: num(1100), MaxTotalMinor: num(1300)}),
		"item_name, time window":                window(domain.Filter{ItemName: str("soup"), StartMinute: minute(11, 0), EndMinute: minute(14, 30)}),
		"item_name, across midnight":            window(domain.Filter{ItemName: str("pecial 2"), StartMinute: minute(20, 0), EndMinute: minute(6, 0)}),
		"item_name many names":                  window(domain.Filter{ItemName: str("special")}),
		"item_name many names, only old orders": {ItemName: str("old ")},
		"item_name combined":                    window(domain.Filter{ItemName: str("ecial"), PaymentMethod: str("card"), Status: str("paid"), MinTotalMinor: num(1050), StartMinute: minute(6, 0), EndMinute: minute(23, 0)}),
		"combined":                              window(domain.Filter{PaymentMethod: str("cash"), Status: str("paid"), MinTotalMinor: num(1200), StartMinute: minute(11, 0), EndMinute: minute(14, 0)}),
		"status, time window":                   window(domain.Filter{Status: str("paid"), StartMinute: minute(8, 0), EndMinute: minute(22, 0)}),
	} {
		t.Run(name, func(t *testing.T) {
			f.RestaurantID = orders[0].RestaurantID
			want := matches(orders, f)
			if len(want) <= 2*7 {
				t.Fatalf("the fixture matches only %d orders: too few for pages", len(want))
			}
			var got []string
			f.Limit = 7
			for {
				page, err := s.Search(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				for _, o := range page.Orders {
					got = append(got, o.OrderID)
				}
				if page.Next == nil || len(got) > len(want) {
					break
				}
				f.After = page.Next
			}
			if !slices.Equal(got, want) {
				t.Fatalf("pages give %d orders, want %d\n got %v\nwant %v", len(got), len(want), got, want)
			}
		})
	}
}

// planNode is a node of EXPLAIN (FORMAT JSON).
type planNode struct {
	NodeType     string     `json:"Node Type"`
	Strategy     string     `json:"Strategy"`
	RelationName string     `json:"Relation Name"`
	ActualRows   float64    `json:"Actual Rows"`
	ActualLoops  float64    `json:"Actual Loops"`
	Plans        []planNode `json:"Plans"`
}

// partitionSuffix ends the name of one hash partition of an order table.
var partitionSuffix = regexp.MustCompile(`_p[0-9]+$`)

// table names the relation a node reads, a partition by its table's name.
func (n planNode) table() string {
	return partitionSuffix.ReplaceAllString(n.RelationName, "")
}

func (n planNode) walk(fn func(planNode)) {
	fn(n)
	for _, c := range n.Plans {
		c.walk(fn)
	}
}

// An item_name search streams: per name, the item keys are read newest first
// from the cursor within the window, merged, de-duplicated and joined to
// their orders until the page is full. It reads about a page of keys and
// orders whatever the window holds, and never sorts or hashes the window.
func TestItemNameSearchReadsThePage(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	orders := manyOrders()
	replaceAll(t, s, orders)
	if _, err := s.DB.ExecContext(ctx, "VACUUM ANALYZE orders, order_item_keys"); err != nil {
		t.Fatal(err)
	}
	var q string
	var args []any
	store.ObserveQueries(s, func(query string, a []any) { q, args = query, a })
	from, until := bizdate.FromTime(time.Date(2026, 2, 10, 0, 0, 0, 0, time.UTC)), bizdate.FromTime(time.Date(2026, 3, 12, 0, 0, 0, 0, time.UTC))
	str := func(v string) *string { return &v }
	for _, c := range []struct {
		item  string
		names int
	}{{"soup", 1}, {"gift", 2}, {"pecial 1", 11}} {
		f := domain.Filter{RestaurantID: orders[0].RestaurantID, Limit: 5, ItemName: str(c.item),
			StartDate: &from, EndDate: &until, From: from.Time(), Until: until.Time().AddDate(0, 0, 1)}
		inWindow := len(matches(orders, f))
		for page := 1; page <= 2; page++ {
			t.Run(fmt.Sprintf("%s page %d", c.item, page), func(t *testing.T) {
				got, err := s.Search(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				var plan []struct{ Plan planNode }
				if err := s.DB.QueryRowContext(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+q, args...).Scan(jsonValue{&plan}); err != nil {
					t.Fatal(err)
				}
				nodes := map[string]int{}
				var keys, lookups float64
				plan[0].Plan.walk(func(n planNode) {
					nodes[n.NodeType]++
					switch {
					case n.NodeType == "Sort" && len(n.Plans) == 1 && n.Plans[0].table() == "order_item_keys":
						// A walk over a name's few keys of the window
						// may be planned as a bitmap scan and a sort of
						// those keys; nothing else is sorted.
					case n.NodeType == "Aggregate" && n.Strategy == "Hashed", n.NodeType == "Sort", n.NodeType == "Seq Scan",
						strings.HasPrefix(n.NodeType, "Bitmap") && n.table() != "order_item_keys" && n.NodeType != "Bitmap Index Scan":
						t.Errorf("the plan has a %s %s node", n.Strategy, n.NodeType)
					}
					switch {
					case n.table() == "order_item_keys" && strings.HasPrefix(n.NodeType, "Index"):
						keys += n.ActualRows * n.ActualLoops
					case n.table() == "orders":
						lookups += n.ActualLoops
					}
				})
				for _, want := range []string{"Limit", "Nested Loop", "Unique"} {
					if nodes[want] == 0 {
						t.Errorf("the plan has no %s node: %v", want, nodes)
					}
				}
				if c.names > 1 && nodes["Merge Append"] == 0 {
					t.Errorf("the plan merges no walks: %v", nodes)
				}
				// A page and the row that says there is another, plus the
				// row each other walk holds in the merge and the orders
				// with several of the names (walks that stream).
				page := float64(f.Limit + 1)
				t.Logf("%v item keys read, %v orders looked up, %d matches in the window; plan nodes %v", keys, lookups, inWindow, nodes)
				if lookups == 0 {
					t.Errorf("the plan looks up no order: %v", nodes)
				}
				if keys > page+float64(c.names)+3 || lookups > page+3 {
					t.Errorf("%v item keys read and %v orders looked up for a page of %d (%d matches in the window)", keys, lookups, f.Limit, inWindow)
				}
				if inWindow < 3*(f.Limit+1) {
					t.Fatalf("the fixture matches only %d orders", inWindow)
				}
				f.After = got.Next
			})
		}
	}
}

// jsonValue scans a json column into v.
type jsonValue struct{ v any }

func (j jsonValue) Scan(src any) error {
	b, ok := src.([]byte)
	if !ok {
		s, ok := src.(string)
		if !ok {
			return fmt.Errorf("json column of type %T", src)
		}
		b = []byte(s)
	}
	return json.Unmarshal(b, j.v)
}

// A wide amount range is answered from the newest orders, whatever the
// planner guesses. Its guess comes from the partition's statistics: here
// the restaurant shares its partition with busier ones whose orders cost a
// tenth as much, so a range holding every one of its orders looks rare to
// the planner, which would read every match from orders_total and sort them.
// The page is found walking the newest orders instead, on orders_recent
// alone, then read: about a page of entries and a page of rows (reading
// every match, 1,500, is what the planner's choice costs).
func TestWideAmountRangeReadsThePage(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	orders := manyOrders() // totals 10.00 to 13.99
	restaurant := orders[0].RestaurantID
	replaceAll(t, s, orders)
	// The restaurants sharing its partition, found by storing one order of
	// each of 64 candidates.
	var probes []domain.Order
	for i := range 64 {
		o := sampleOrder("probe", "paid")
		o.RestaurantID = fmt.Sprintf("00000000-0000-4000-8000-%012d", 100+i)
		probes = append(probes, o)
	}
	if err := s.Replace(ctx, probes, nil); err != nil {
		t.Fatal(err)
	}
	var peers []string
	err := queryStrings(ctx, s, &peers, `SELECT restaurant_id::text FROM orders WHERE tableoid = (SELECT tableoid FROM orders WHERE restaurant_id = $1 LIMIT 1)
		AND restaurant_id <> $1 ORDER BY restaurant_id LIMIT 3`, restaurant)
	if err != nil {
		t.Fatal(err)
	}
	if len(peers) < 2 {
		t.Fatalf("%d of 64 candidates share the restaurant's partition", len(peers))
	}
	for _, peer := range peers {
		var theirs []domain.Order
		for i := range 8000 {
			o := sampleOrder(fmt.Sprintf("p-%04d", i), "paid")
			o.RestaurantID = peer
			o.OccurredAt = orders[i%len(orders)].OccurredAt
			o.BusinessDate, o.LocalMinute = bizdate.FromTime(o.OccurredAt), orders[i%len(orders)].LocalMinute
			o.TotalAmountMinor = int64(100 + i%40)
			theirs = append(theirs, o)
		}
		replaceAll(t, s, theirs)
	}
	if _, err := s.DB.ExecContext(ctx, "VACUUM ANALYZE orders"); err != nil {
		t.Fatal(err)
	}
	var q string
	var args []any
	store.ObserveQueries(s, func(query string, a []any) { q, args = query, a })
	num := func(v int64) *int64 { return &v }
	f := domain.Filter{RestaurantID: restaurant, Limit: 20, MinTotalMinor: num(1000), MaxTotalMinor: num(1399)}
	want := matches(orders, f)
	for page := 1; page <= 2; page++ {
		got, err := s.Search(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, o := range got.Orders {
			ids = append(ids, o.OrderID)
		}
		if first := (page - 1) * f.Limit; !slices.Equal(ids, want[first:first+f.Limit]) {
			t.Fatalf("page %d: %v, want %v", page, ids, want[first:first+f.Limit])
		}
		var plan []struct{ Plan planNode }
		if err := s.DB.QueryRowContext(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+q, args...).Scan(jsonValue{&plan}); err != nil {
			t.Fatal(err)
		}
		var read, fromIndex float64
		plan[0].Plan.walk(func(n planNode) {
			if n.table() == "orders" && strings.Contains(n.NodeType, "Scan") {
				read += n.ActualRows * n.ActualLoops
			}
			if n.table() == "orders" && n.NodeType == "Index Only Scan" {
				fromIndex += n.ActualRows * n.ActualLoops
			}
		})
		// The walk's entries and the page's orders.
		t.Logf("page %d: %v rows read for a page of %d (%d matches), %v of them from an index alone", page, read, f.Limit, len(want), fromIndex)
		if read > float64(2*(f.Limit+1)) {
			t.Errorf("page %d: %v rows read for a page of %d (%d matches)\n%s", page, read, f.Limit, len(want), q)
		}
		if fromIndex < float64(f.Limit+1) {
			t.Errorf("page %d: the walk read %v entries from an index alone: it reads the table", page, fromIndex)
		}
		f.After = got.Next
	}
}

// replaceAll stores the orders in batches of 500.
func replaceAll(t *testing.T, s *store.Store, orders []domain.Order) {
	t.Helper()
	for batch := range slices.Chunk(orders, 500) {
		if err := s.Replace(context.Background(), batch, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// queryStrings scans the rows of a one-column query into out.
func queryStrings(ctx context.Context, s *store.Store, out *[]string, q string, args ...any) error {
	rows, err := s.DB.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return err
		}
		*out = append(*out, v)
	}
	return rows.Err()
}

// Every statement of a search plans for the restaurant's partition alone:
// planning a lookup on every partition cost more than answering it.
func TestSearchPlansReadOneRestaurantsPartition(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	orders := manyOrders()
	replaceAll(t, s, orders)
	type statement struct {
		q    string
		args []any
	}
	var seen []statement
	store.ObserveQueries(s, func(q string, args []any) { seen = append(seen, statement{q, args}) })
	str := func(v string) *string { return &v }
	num := func(v int64) *int64 { return &v }
	minute := func(h, m int) *int { v := h*60 + m; return &v }
	from, until := bizdate.FromTime(time.Date(2026, 2, 10, 0, 0, 0, 0, time.UTC)), bizdate.FromTime(time.Date(2026, 3, 12, 0, 0, 0, 0, time.UTC))
	for name, f := range map[string]domain.Filter{
		"no filter":          {},
		"amount range, wide": {MinTotalMinor: num(1000), MaxTotalMinor: num(1399)},
		"amount range, rare": {MinTotalMinor: num(1000), MaxTotalMinor: num(1005)},
		"time window":        {StartMinute: minute(8, 0), EndMinute: minute(22, 0), StartDate: &from, EndDate: &until},
		"time window, night": {StartMinute: minute(2, 0), EndMinute: minute(2, 30), StartDate: &from, EndDate: &until},
		"status":             {Status: str("refunded")},
		"item_name":          {ItemName: str("gift")},
		"item_name common":   {ItemName: str("special")},
	} {
		t.Run(name, func(t *testing.T) {
			seen = nil
			f.RestaurantID, f.Limit = orders[0].RestaurantID, 20
			if f.StartDate != nil {
				f.From, f.Until = from.Time(), until.Time().AddDate(0, 0, 1)
			}
			if _, err := s.Search(ctx, f); err != nil {
				t.Fatal(err)
			}
			if len(seen) == 0 {
				t.Fatal("no statement observed")
			}
			for _, st := range seen {
				var plan []struct{ Plan planNode }
				if err := s.DB.QueryRowContext(ctx, "EXPLAIN (FORMAT JSON) "+st.q, st.args...).Scan(jsonValue{&plan}); err != nil {
					t.Fatal(err)
				}
				partitions := map[string]map[string]bool{}
				plan[0].Plan.walk(func(n planNode) {
					if n.RelationName != "" {
						if partitions[n.table()] == nil {
							partitions[n.table()] = map[string]bool{}
						}
						partitions[n.table()][n.RelationName] = true
					}
				})
				for table, ps := range partitions {
					if len(ps) > 1 {
						t.Errorf("the plan reads %d partitions of %s:\n%s", len(ps), table, st.q)
					}
				}
			}
		})
	}
}
