package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/accounting/internal/domain"
	"partnerapi.dev/services/accounting/internal/store"
	"partnerapi.dev/services/accounting/migrations"
	"partnerapi.dev/services/contracts"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// benchTarget is a loaded database, its busiest restaurant and its last
// month with data.
type benchTarget struct {
	svc    *domain.Service
	tenant domain.Tenant
	month  domain.PeriodQuery
	day    domain.PeriodQuery
}

// loadBench opens ACCOUNTING_BENCH_DATABASE_URL (a database loaded with
// `seed --size bench --accounting-out - | accounting import`, the accounting
// records of the 1M-order bench data set) or, without it, loads
// ACCOUNTING_BENCH_SOURCES (default 20000) synthetic payments of one
// restaurant over 60 days into a fresh test database.
func loadBench(b *testing.B) benchTarget {
	b.Helper()
	ctx := context.Background()
	url := os.Getenv("ACCOUNTING_BENCH_DATABASE_URL")
	synthetic := url == ""
	if synthetic {
		url = testenv.NewDatabase(b, "accounting-bench", database.MigrateURL("accounting", migrations.FS, migrations.Go()...))
	}
	db, err := database.Open(ctx, database.Config{URL: config.Secret(url)}, "accounting")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close(ctx) })
	st := &store.Store{DB: db.Gorm}
	restaurant := "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a01"
	tz, dsh := "Europe/Helsinki", 4
	if synthetic {
		n := 20000
		if v, err := strconv.Atoi(os.Getenv("ACCOUNTING_BENCH_SOURCES")); err == nil && v > 0 {
			n = v
		}
		if err := loadSynthetic(ctx, st, restaurant, n); err != nil {
			b.Fatal(err)
		}
		db.Gorm.Exec("ANALYZE")
	} else {
		var row struct {
			RestaurantID string
			Days         int
		}
		if err := db.Gorm.Raw(`SELECT restaurant_id::text, count(*) AS days FROM daily_source_state GROUP BY 1 ORDER BY sum(source_count) DESC LIMIT 1`).Scan(&row).Error; err != nil {
			b.Fatal(err)
		}
		restaurant = row.RestaurantID
		// The schema keeps no restaurant settings: the time zone here only
		// labels the period and the clock.
	}
	var last time.Time
	if err := db.Gorm.Raw(`SELECT max(business_date) FROM daily_source_state WHERE restaurant_id = ?`, restaurant).Scan(&last).Error; err != nil {
		b.Fatal(err)
	}
	end := bizdate.FromTime(last)
	loc, _ := time.LoadLocation(tz)
	first := bizdate.Date{Year: end.Year, Month: end.Month, Day: 1}
	clock := func() time.Time { return end.AddDays(1).Start(loc, dsh).Add(time.Hour) }
	return benchTarget{
		svc:    &domain.Service{Repo: st, Now: clock},
		tenant: domain.Tenant{ID: restaurant, Loc: loc, TimeZone: tz, DayStartHour: dsh, Currency: "EUR"},
		month:  domain.PeriodQuery{Scope: "month", Start: first, End: end},
		day:    domain.PeriodQuery{Scope: "day", Start: end, End: end},
	}
}

func loadSynthetic(ctx context.Context, st *store.Store, restaurant string, n int) error {
	rnd := rand.New(rand.NewPCG(1, 2))
	loc, _ := time.LoadLocation("Europe/Helsinki")
	methods := []string{"card", "card", "card", "cash", "online", "wolt"}
	start := time.Date(2026, 5, 1, 11, 0, 0, 0, loc)
	var batch domain.Batch
	flush := func() error {
		err := st.Ingest(ctx, batch)
		batch = domain.Batch{}
		return err
	}
	for i := range n {
		at := start.Add(time.Duration(i) * 60 * 24 * time.Hour / time.Duration(n))
		gross := int64(500 + rnd.IntN(6000))
		reduced := gross * int64(rnd.IntN(100)) / 100
		vr, vs := reduced*14/114, (gross-reduced)*255/1255
		id := fmt.Sprintf("o-%07d", i)
		batch.Sources = append(batch.Sources, domain.SourceWrite{RestaurantID: restaurant, Source: domain.Source{
			Kind: contracts.SourceKindOrder, RecordID: id, ReceiptHash: "rh-" + id, OrderIDs: []string{id}, OccurredAt: at.UTC(),
			BusinessDate: bizdate.Of(at, loc, 4), Method: methods[rnd.IntN(len(methods))], VatKnown: true, Fingerprint: id,
			Amounts: domain.Amounts{Gross: gross, Vat: vr + vs, Count: 1,
				GrossByRate: domain.RateAmounts{Reduced: reduced, Standard: gross - reduced},
				VatByRate:   domain.RateAmounts{Reduced: vr, Standard: vs}}}})
		if i%20 == 0 {
			ref := at.Add(30 * time.Hour)
			batch.Refunds = append(batch.Refunds, domain.RefundWrite{RestaurantID: restaurant, Event: domain.RefundEvent{
				ID: "r-" + id, Kind: contracts.RefundKindRefund, OccurredAt: ref.UTC(), BusinessDate: bizdate.Of(ref, loc, 4),
				OrderID: &id, Method: "card", Amount: gross, ReturnedLines: []contracts.ReturnedLine{}, Fingerprint: id}})
		}
		if len(batch.Sources) == 2000 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

func BenchmarkMonthReport(b *testing.B) {
	t := loadBench(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := t.svc.Report(ctx, t.tenant, t.month, true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDayReport(b *testing.B) {
	t := loadBench(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := t.svc.Report(ctx, t.tenant, t.day, true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRefundsPage(b *testing.B) {
	t := loadBench(b)
	ctx := context.Background()
	q := domain.RefundQuery{Start: t.month.Start, End: t.month.End, Limit: 50}
	for b.Loop() {
		if _, err := t.svc.Refunds(ctx, t.tenant, q, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWorkspace(b *testing.B) {
	t := loadBench(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := t.svc.Workspace(ctx, t.tenant, t.month, "", true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApply measures one correction cycle: preview, apply, preview of
// the undo, undo (so the day stays the same size).
func BenchmarkApply(b *testing.B) {
	t := loadBench(b)
	ctx := context.Background()
	// A day before the reported month: the ledger rows this adds do not
	// weigh on the report benchmarks.
	before := t.month.Start.AddDays(-1)
	ws, err := t.svc.Workspace(ctx, t.tenant, domain.PeriodQuery{Scope: "day", Start: before, End: before}, "", true)
	if err != nil || len(ws.Sources) == 0 {
		b.Fatalf("no source to correct: %v", err)
	}
	src := ws.Sources[0]
	date := src.BusinessDate
	to := "cash"
	if src.MethodKey == "cash" {
		to = "card"
	}
	write := func(in domain.CorrectionInput, action string) {
		p, err := t.svc.Preview(ctx, t.tenant, in)
		if err != nil {
			b.Fatal(err)
		}
		yes := true
		exp := p.ExpiresAt
		if _, err := t.svc.Write(ctx, t.tenant, "bench", action, domain.WriteInput{CorrectionInput: in, ExpectedRevisionID: p.ExpectedRevisionID,
			PreviewFingerprint: p.PreviewFingerprint, ExpiresAt: &exp, Confirmed: &yes, IdempotencyKey: domain.NewID()}); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		write(domain.CorrectionInput{BusinessDate: &date, SourceKind: src.SourceKind, SourceRecordID: src.SourceRecordID, Action: "correct", ToMethodKey: &to, Reason: "bench"}, "correct")
		write(domain.CorrectionInput{BusinessDate: &date, SourceKind: src.SourceKind, SourceRecordID: src.SourceRecordID, Action: "undo", Reason: "bench"}, "undo")
	}
}
