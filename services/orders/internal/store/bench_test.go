package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/orders/internal/api"
	"partnerapi.dev/services/orders/internal/domain"
	"partnerapi.dev/services/orders/internal/store"
	"partnerapi.dev/services/orders/migrations"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// benchTarget is a loaded database and one restaurant in it to search.
type benchTarget struct {
	store        *store.Store
	restaurantID string
	loc          *time.Location
	dayStartHour int
	lastDate     bizdate.Date
	sample       domain.Order
	itemWord     string
	rareItem     string // the restaurant's least sold item in the last 31 days
	total        int
}

// loadBench opens ORDERS_BENCH_DATABASE_URL (a database loaded with
// `seed --size bench | orders import`, see docs/orders.md) or, without it,
// loads ORDERS_BENCH_ORDERS (default 20000) synthetic orders into a fresh
// test database.
// The synthetic database lives as long as the top-level benchmark b.
func loadBench(b *testing.B) benchTarget {
	b.Helper()
	var bench benchTarget
	var benchErr error
	func() {
		ctx := context.Background()
		url := os.Getenv("ORDERS_BENCH_DATABASE_URL")
		synthetic := url == ""
		if synthetic {
			url = testenv.NewDatabase(b, "orders-bench", database.MigrateURL("orders", migrations.FS, migrations.Go(migrations.DefaultPartitions)...))
		}
		db, err := database.Open(ctx, database.Config{URL: config.Secret(url)}, "orders")
		if err != nil {
			benchErr = err
			return
		}
		s := &store.Store{DB: db.SQL}
		if synthetic {
			n := 20000
			if v, err := strconv.Atoi(os.Getenv("ORDERS_BENCH_ORDERS")); err == nil && v > 0 {
				n = v
			}
			if benchErr = loadSynthetic(ctx, s, n); benchErr != nil {
				return
			}
			_, _ = db.SQL.ExecContext(ctx, "ANALYZE")
		}
		bench, benchErr = pickTarget(ctx, s)
	}()
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return bench
}

var syntheticItems = []string{"Salmon Soup", "Reindeer Stew", "Karelian Pies", "Vegan Bowl", "Meatballs with Mash",
	"Fish and Chips", "Margherita Pizza", "Lingonberry Cake", "Blueberry Pie", "Cinnamon Bun", "Coffee", "Caffe Latte",
	"Sparkling Water", "Lager 0.4 l", "House Wine 16 cl", "Long Drink", "Coffee Beans 250 g", "Gift Card"}

// loadSynthetic stores n orders over 4 restaurants and 120 days.
func loadSynthetic(ctx context.Context, s *store.Store, n int) error {
	rnd := rand.New(rand.NewPCG(1, 2))
	loc, _ := time.LoadLocation("Europe/Helsinki")
	end := time.Date(2026, 11, 15, 4, 0, 0, 0, loc)
	statuses := []string{"paid", "paid", "paid", "paid", "paid", "paid", "paid", "paid", "paid", "paid", "paid", "paid", "paid", "paid", "paid", "paid", "paid", "paid", "refunded", "voided"}
	methods := []string{"card", "card", "card", "card", "cash", "online", "wolt", "foodora"}
	var batch []domain.Order
	for i := range n {
		rid := fmt.Sprintf("00000000-0000-4000-8000-%012d", i%4)
		at := end.Add(-time.Duration(rnd.Int64N(int64(120 * 24 * time.Hour)))).UTC().Truncate(time.Microsecond)
		o := domain.Order{
			RestaurantID: rid, OrderID: fmt.Sprintf("ord_%016x", rnd.Uint64()), RestaurantOrderNumber: int64(i + 1),
			ReceiptHash: fmt.Sprintf("%032x", rnd.Uint64()), OccurredAt: at, BusinessDate: bizdate.Of(at, loc, 4),
			LocalMinute: domain.LocalMinute(at, loc), OrderType: "dine_in", Status: statuses[rnd.IntN(len(statuses))],
			Origin: domain.Origin{Kind: "pos"}, Currency: "EUR", VatAllocationMethod: "stored", TaxCountryCode: "FI",
			TaxRatesAsOf: bizdate.Date{Year: 2026, Month: 1, Day: 1},
		}
		o.RecordedPaymentMethod = methods[rnd.IntN(len(methods))]
		o.PaymentMethod = o.RecordedPaymentMethod
		for j := range 1 + rnd.IntN(4) {
			price := int64(300 + rnd.IntN(3000))
			o.Lines = append(o.Lines, domain.Line{LineID: fmt.Sprintf("%s-%d", o.OrderID, j), Name: syntheticItems[rnd.IntN(len(syntheticItems))],
				Quantity: 1, UnitPriceMinor: price, GrossAmountMinor: price, VatAmountMinor: price / 10, TaxEvidence: "snapshot",
				VatRates: []domain.VatRate{{Category: "reduced", RateBps: 1350, VatAmountMinor: price / 10}}})
			o.TotalAmountMinor += price
		}
		o.OriginalAmountMinor, o.GrossSalesMinor = o.TotalAmountMinor, o.TotalAmountMinor
		o.LineCount = len(o.Lines)
		o.VatRows = []domain.VatRow{{Category: "reduced", RateBps: 1350, GrossAmountMinor: o.TotalAmountMinor}}
		batch = append(batch, o)
		if len(batch) == 5000 || i == n-1 {
			if err := s.Replace(ctx, batch, nil); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	return nil
}

// pickTarget chooses the restaurant with the most orders and infers its
// time zone and day start hour from the stored business dates.
func pickTarget(ctx context.Context, s *store.Store) (benchTarget, error) {
	var t benchTarget
	t.store = s
	row := s.DB.QueryRowContext(ctx, `SELECT restaurant_id, count(*) FROM orders GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 1`)
	if err := row.Scan(&t.restaurantID, &t.total); err != nil {
		return t, fmt.Errorf("no orders to benchmark: %w", err)
	}
	var last time.Time
	if err := s.DB.QueryRowContext(ctx, `SELECT max(business_date) FROM orders WHERE restaurant_id = $1`, t.restaurantID).Scan(&last); err != nil {
		return t, err
	}
	t.lastDate = bizdate.FromTime(last.UTC())
	type obs struct {
		at time.Time
		bd bizdate.Date
	}
	var sample []obs
	err := func() error {
		rows, err := s.DB.QueryContext(ctx, `SELECT occurred_at, business_date FROM orders WHERE restaurant_id = $1 ORDER BY occurred_at DESC LIMIT 2000`, t.restaurantID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var at, bd time.Time
			if err := rows.Scan(&at, &bd); err != nil {
				return err
			}
			sample = append(sample, obs{at, bizdate.FromTime(bd.UTC())})
		}
		return rows.Err()
	}()
	if err != nil {
		return t, err
	}
	found := false
	for _, zone := range []string{"Europe/Helsinki", "Europe/Stockholm", "America/New_York"} {
		loc, _ := time.LoadLocation(zone)
		for h := 0; h < 24 && !found; h++ {
			ok := true
			for _, o := range sample {
				if bizdate.Of(o.at, loc, h) != o.bd {
					ok = false
					break
				}
			}
			if ok {
				t.loc, t.dayStartHour, found = loc, h, true
			}
		}
		if found {
			break
		}
	}
	if !found {
		return t, fmt.Errorf("cannot infer the time zone of restaurant %s", t.restaurantID)
	}
	var orderID string
	if err := s.DB.QueryRowContext(ctx, `SELECT order_id FROM orders WHERE restaurant_id = $1 AND business_date = $2 AND line_count > 0 LIMIT 1`,
		t.restaurantID, t.lastDate.AddDays(-10).Time()).Scan(&orderID); err != nil {
		return t, err
	}
	if t.sample, err = s.Get(ctx, t.restaurantID, orderID); err != nil {
		return t, err
	}
	// a word of a real line name: a common item_name search
	t.itemWord = strings.ToLower(t.sample.Lines[0].Name)
	if i := strings.IndexByte(t.itemWord, ' '); i >= 4 {
		t.itemWord = t.itemWord[:i]
	}
	var all []string
	if err := queryStrings(ctx, s, &all, `SELECT name FROM order_item_names WHERE restaurant_id = $1`, t.restaurantID); err != nil {
		return t, err
	}
	fewest := -1
	for _, n := range all {
		var c int
		if err := s.DB.QueryRowContext(ctx, `SELECT count(*) FROM orders WHERE restaurant_id = $1 AND business_date > $2 AND item_names LIKE $3`,
			t.restaurantID, t.lastDate.AddDays(-31).Time(), "%"+n+"%").Scan(&c); err != nil {
			return t, err
		}
		if c > 0 && (fewest < 0 || c < fewest) {
			fewest, t.rareItem = c, n
		}
	}
	return t, nil
}

func (t benchTarget) filter(b *testing.B, query string) domain.Filter {
	q, err := url.ParseQuery(query)
	if err != nil {
		b.Fatal(err)
	}
	req, err := api.ParseSearch(q, t.restaurantID, t.loc, t.dayStartHour)
	if err != nil {
		b.Fatal(err)
	}
	return req.Filter
}

func (t benchTarget) dates() string {
	return "start_date=" + t.lastDate.AddDays(-30).String() + "&end_date=" + t.lastDate.String()
}

// runSearch runs f b.N times and reports the p50 and p99 latency.
func runSearch(b *testing.B, t benchTarget, f domain.Filter, minMatches int) {
	ctx := context.Background()
	page, err := t.store.Search(ctx, f)
	if err != nil {
		b.Fatal(err)
	}
	if len(page.Orders) < minMatches {
		b.Fatalf("only %d matches; the benchmark would measure nothing", len(page.Orders))
	}
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := t.store.Search(ctx, f); err != nil {
			b.Fatal(err)
		}
		durations = append(durations, time.Since(start))
	}
	b.StopTimer()
	reportPercentiles(b, durations)
	b.ReportMetric(float64(t.total), "orders-in-restaurant")
}

func reportPercentiles(b *testing.B, d []time.Duration) {
	slices.Sort(d)
	pick := func(p float64) float64 {
		i := int(float64(len(d)-1) * p)
		return float64(d[i].Microseconds()) / 1000
	}
	b.ReportMetric(pick(0.5), "p50-ms")
	b.ReportMetric(pick(0.99), "p99-ms")
}

// BenchmarkSearch measures one page of order search per filter class on one
// restaurant (the one with the most orders).
func BenchmarkSearch(b *testing.B) {
	t := loadBench(b)
	b.Run("NoFilter", func(b *testing.B) {
		runSearch(b, t, t.filter(b, "limit=20"), 20)
	})
	b.Run("DeepCursor", func(b *testing.B) {
		f := t.filter(b, "limit=20")
		// a position half-way through the restaurant's history
		var at time.Time
		var id string
		if err := t.store.DB.QueryRow(`SELECT occurred_at, order_id FROM orders WHERE restaurant_id = $1 ORDER BY occurred_at DESC, order_id DESC OFFSET $2 LIMIT 1`,
			t.restaurantID, t.total/2).Scan(&at, &id); err != nil {
			b.Fatal(err)
		}
		f.After = &domain.Position{OccurredAt: at, OrderID: id}
		runSearch(b, t, f, 20)
	})
	b.Run("OrderID", func(b *testing.B) {
		runSearch(b, t, t.filter(b, "order_id="+url.QueryEscape(t.sample.OrderID)), 1)
	})
	b.Run("ReceiptReference", func(b *testing.B) {
		runSearch(b, t, t.filter(b, t.dates()+"&receipt_reference="+t.sample.ReceiptHash), 1)
	})
	b.Run("RestaurantOrderNumber", func(b *testing.B) {
		runSearch(b, t, t.filter(b, t.dates()+"&restaurant_order_number="+strconv.FormatInt(t.sample.RestaurantOrderNumber, 10)), 1)
	})
	b.Run("ItemNameCommon", func(b *testing.B) {
		b.Logf("item_name=%s", t.itemWord)
		runSearch(b, t, t.filter(b, t.dates()+"&limit=20&item_name="+url.QueryEscape(t.itemWord)), 20)
	})
	b.Run("ItemNameUncommon", func(b *testing.B) {
		b.Logf("item_name=%s", t.rareItem)
		runSearch(b, t, t.filter(b, t.dates()+"&item_name="+url.QueryEscape(t.rareItem)), 1)
	})
	b.Run("ItemNameCommonRefunded", func(b *testing.B) {
		// a common item with a filter few of its orders pass
		runSearch(b, t, t.filter(b, t.dates()+"&limit=20&status=refunded&item_name="+url.QueryEscape(t.itemWord)), 1)
	})
	b.Run("ItemNameRare", func(b *testing.B) {
		// a name the restaurant never sold
		runSearch(b, t, t.filter(b, t.dates()+"&item_name=zzqx"), 0)
	})
	// Amounts and times come from a real order of the target, so the filters
	// match whatever the currency and opening hours of the data set are.
	b.Run("AmountRange", func(b *testing.B) {
		total := t.sample.TotalAmountMinor
		runSearch(b, t, t.filter(b, fmt.Sprintf("%s&min_total_minor=%d&max_total_minor=%d", t.dates(), total-total/20, total+total/20)), 1)
	})
	b.Run("TimeWindow", func(b *testing.B) {
		local := t.sample.OccurredAt.In(t.loc)
		from, to := local.Add(-45*time.Minute), local.Add(45*time.Minute)
		runSearch(b, t, t.filter(b, t.dates()+"&start_time="+from.Format("15:04")+"&end_time="+to.Format("15:04")), 1)
	})
	b.Run("Status", func(b *testing.B) {
		runSearch(b, t, t.filter(b, t.dates()+"&status=refunded"), 1)
	})
	b.Run("PaymentMethod", func(b *testing.B) {
		runSearch(b, t, t.filter(b, t.dates()+"&payment_method=cash"), 1)
	})
	b.Run("Combined", func(b *testing.B) {
		runSearch(b, t, t.filter(b, t.dates()+"&payment_method=card&status=paid&min_total_minor=1000&start_time=11:00&end_time=14:00"), 1)
	})
}

func BenchmarkDetails(b *testing.B) {
	t := loadBench(b)
	ctx := context.Background()
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := t.store.Get(ctx, t.restaurantID, t.sample.OrderID); err != nil {
			b.Fatal(err)
		}
		durations = append(durations, time.Since(start))
	}
	b.StopTimer()
	reportPercentiles(b, durations)
}

var _ = sql.ErrNoRows
