package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// checkArithmetic holds the report's invariants: raw total = sum of rows,
// gross = net + VAT per row, rates sum to the row, adjusted rows conserve
// the raw gross, net, VAT and count.
func checkArithmetic(t *testing.T, rep report) {
	t.Helper()
	sums := func(rows []row) (g, n, v, c int64) {
		for _, row := range rows {
			if row.GrossMinor != row.NetMinor+row.VatMinor {
				t.Errorf("row %v: gross %d != net %d + vat %d", row.Key, row.GrossMinor, row.NetMinor, row.VatMinor)
			}
			if row.GrossByRateMinor == nil || row.VatByRateMinor == nil {
				t.Errorf("row %v: no amounts by rate", row.Key)
			}
			var byRate, vatByRate int64
			for _, x := range row.GrossByRateMinor {
				byRate += x
			}
			for _, x := range row.VatByRateMinor {
				vatByRate += x
			}
			if byRate != row.GrossMinor || vatByRate != row.VatMinor {
				t.Errorf("row %v: rates %d/%d do not sum to gross %d / vat %d", row.Key, byRate, vatByRate, row.GrossMinor, row.VatMinor)
			}
			g, n, v, c = g+row.GrossMinor, n+row.NetMinor, v+row.VatMinor, c+row.TransactionCount
		}
		return
	}
	g, n, v, c := sums(rep.RawRows)
	if g != rep.RawTotalMinor {
		t.Errorf("rawTotalMinor %d != sum of rows %d", rep.RawTotalMinor, g)
	}
	if rep.Status == "ready" {
		if rep.AdjustedRows == nil {
			t.Error("ready without adjusted rows")
		}
		ag, an, av, ac := sums(rep.AdjustedRows)
		if ag != g || an != n || av != v || ac != c {
			t.Errorf("adjusted (%d %d %d %d) does not conserve raw (%d %d %d %d)", ag, an, av, ac, g, n, v, c)
		}
		if deref(rep.AdjustedTotalMinor) != ag {
			t.Errorf("adjustedTotalMinor %v != %d", rep.AdjustedTotalMinor, ag)
		}
	} else if rep.AdjustedRows != nil || rep.AdjustedTotalMinor != nil {
		t.Errorf("status %v with adjusted values", rep.Status)
	}
	var dayTotal, dayCount int64
	for _, d := range rep.Days {
		dayTotal += d.RawTotalMinor
		dayCount += d.TransactionCount
	}
	if dayTotal != g || dayCount != c {
		t.Errorf("days sum %d/%d != rows %d/%d", dayTotal, dayCount, g, c)
	}
}

// rowsByKey is rows by payment method.
func rowsByKey(rows []row) map[string]row {
	out := map[string]row{}
	for _, r := range rows {
		out[r.Key] = r
	}
	return out
}

func warningCodes(rep report) []string {
	var out []string
	for _, w := range rep.Warnings {
		out = append(out, w.Code)
	}
	return out
}

func TestReportArithmeticAndMonthIsSumOfDays(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var recs []rec
	methods := []string{"card", "cash", "online", "wolt"}
	for day := 1; day <= 30; day++ {
		for i := 0; i < 5; i++ {
			id := fmt.Sprintf("o-%02d-%d", day, i)
			recs = append(recs, source(helsinki, id, methods[(day+i)%4], int64(1000+day*37+i*113), hel(2026, 6, day, 12+i, 5)))
		}
	}
	// the other restaurant's payments never show
	recs = append(recs, source(other, "x-1", "card", 999999, hel(2026, 6, 3, 12, 0)))
	e.ingest(recs...)

	month := mustGet[report](e, reportPath(helsinki, "month", "2026-06-01", "2026-06-30"), helsinki)
	checkArithmetic(t, month)
	if month.Status != "ready" || month.RawSourceBasis != "services_accounting" || !month.ReadOnly {
		t.Fatalf("month: %v %v %v", month.Status, month.RawSourceBasis, month.ReadOnly)
	}
	if len(month.Days) != 30 {
		t.Fatalf("days: %d", len(month.Days))
	}
	sum := map[string][4]int64{}
	for day := 1; day <= 30; day++ {
		d := fmt.Sprintf("2026-06-%02d", day)
		rep := mustGet[report](e, reportPath(helsinki, "day", d, d), helsinki)
		checkArithmetic(t, rep)
		for k, row := range rowsByKey(rep.RawRows) {
			s := sum[k]
			sum[k] = [4]int64{s[0] + row.GrossMinor, s[1] + row.NetMinor, s[2] + row.VatMinor, s[3] + row.TransactionCount}
		}
	}
	got := rowsByKey(month.RawRows)
	if len(got) != len(sum) {
		t.Fatalf("month methods %d, days %d", len(got), len(sum))
	}
	for k, s := range sum {
		row := got[k]
		if [4]int64{row.GrossMinor, row.NetMinor, row.VatMinor, row.TransactionCount} != s {
			t.Errorf("%s: month %+v != sum of days %v", k, row, s)
		}
	}
	if month.CurrentSourceFingerprint == nil {
		t.Error("no source fingerprint")
	}
	// An empty future month holds nothing and is ready.
	fut := mustGet[report](e, reportPath(helsinki, "month", "2027-02-01", "2027-02-28"), helsinki)
	if fut.Status != "ready" || fut.RawTotalMinor != 0 || fut.CurrentSourceFingerprint != nil {
		t.Fatalf("future: %+v", fut)
	}
}

func TestReportParameters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct{ query, want string }{
		{"scope=day&start_date=2026-06-01&end_date=2026-06-02", "scope=day"},
		{"scope=month&start_date=2026-06-01&end_date=2026-07-01", "same calendar month"},
		{"scope=week&start_date=2026-06-01&end_date=2026-06-01", "scope must be"},
		{"start_date=2026-06-01&end_date=2026-06-01", "scope is required"},
		{"scope=day&start_date=2026-6-1&end_date=2026-06-01", "start_date"},
		{"scope=day&start_date=2026-06-02&end_date=2026-06-01", "before"},
		{"scope=day&start_date=2026-06-01&end_date=2026-06-01&foo=1", "foo"},
	} {
		if a := e.refusal("/v1/restaurants/"+helsinki+"/payment-report?"+tc.query, helsinki, nil); a.Status != http.StatusBadRequest || !strings.Contains(a.Message, tc.want) {
			t.Errorf("%s: %d %s", tc.query, a.Status, a.Raw)
		}
	}
	// a restaurant outside the grant
	if a := e.refusal(reportPath(other, "day", "2026-06-01", "2026-06-01"), helsinki, nil); a.Status != http.StatusNotFound {
		t.Fatalf("other restaurant: %d", a.Status)
	}
}

func TestReportStatusesAndWarnings(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.ingest(
		source(helsinki, "a", "card", 2000, hel(2026, 6, 10, 12, 0)),
		source(helsinki, "b", "cash", 1500, hel(2026, 6, 10, 13, 0)),
		source(helsinki, "c", "card", 1200, hel(2026, 6, 11, 13, 0), unknownVat),
		refund(helsinki, "r-legacy", "refund", "a", 300, hel(2026, 6, 12, 10, 0), set("legacyTiming", true)),
		refund(helsinki, "r-unknown", "refund", "b", 200, hel(2026, 6, 13, 10, 0), set("accountingImpact", nil)),
	)
	// ready day
	rep := mustGet[report](e, reportPath(helsinki, "day", "2026-06-10", "2026-06-10"), helsinki)
	checkArithmetic(t, rep)
	if rep.Status != "ready" || len(warningCodes(rep)) != 0 {
		t.Fatalf("ready day: %v %+v", rep.Status, rep.Warnings)
	}
	// unknown VAT evidence
	rep = mustGet[report](e, reportPath(helsinki, "day", "2026-06-11", "2026-06-11"), helsinki)
	checkArithmetic(t, rep)
	if rep.Status != "review_required" || strings.Join(warningCodes(rep), ",") != "vat_evidence_incomplete" {
		t.Fatalf("unknown VAT: %v %+v", rep.Status, rep.Warnings)
	}
	if w := rep.Warnings[0]; deref(w.BusinessDate) != "2026-06-11" {
		t.Fatalf("warning date: %+v", w)
	}
	if rows := rowsByKey(rep.RawRows); rows["card"].GrossByRateMinor["unknown"] != 1200 {
		t.Fatalf("unknown rate: %+v", rows["card"])
	}
	// refund flags: informational, the day stays ready
	rep = mustGet[report](e, reportPath(helsinki, "day", "2026-06-12", "2026-06-12"), helsinki)
	rr := rep.RefundReporting
	if rep.Status != "ready" || !rr.LegacyTiming || rr.IncompleteEvidence || rr.Policy != "refund-event-date/v1" {
		t.Fatalf("legacy day: %v %+v", rep.Status, rr)
	}
	if strings.Join(warningCodes(rep), ",") != "refund_timing_legacy" {
		t.Fatalf("legacy warnings: %+v", rep.Warnings)
	}
	rep = mustGet[report](e, reportPath(helsinki, "month", "2026-06-01", "2026-06-30"), helsinki)
	checkArithmetic(t, rep)
	if got := strings.Join(warningCodes(rep), ","); got != "vat_evidence_incomplete,refund_timing_legacy,refund_evidence_incomplete" || rep.Status != "review_required" {
		t.Fatalf("month: %v %s", rep.Status, got)
	}

	// the ledger cannot be read: raw values still answered, not ready
	if err := e.db.Gorm.Exec(`ALTER TABLE correction_ledger RENAME TO correction_ledger_away`).Error; err != nil {
		t.Fatal(err)
	}
	rep = mustGet[report](e, reportPath(helsinki, "day", "2026-06-10", "2026-06-10"), helsinki)
	if rep.Status != "review_required" || strings.Join(warningCodes(rep), ",") != "correction_ledger_unavailable" || rep.RawTotalMinor != 3500 || rep.AdjustedRows != nil {
		t.Fatalf("ledger down: %+v", rep)
	}
}

func TestBusinessDayCutoffAndDST(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ny, _ := time.LoadLocation("America/New_York")
	e.ingest(
		// Helsinki, cutoff 04:00: 03:59 belongs to the previous business date
		source(helsinki, "before-cutoff", "card", 100, hel(2026, 6, 11, 3, 59)),
		source(helsinki, "at-cutoff", "card", 200, hel(2026, 6, 11, 4, 0)),
		// the spring-forward night (2026-03-29, 03:00 -> 04:00): 02:30 is the 28th
		source(helsinki, "dst-night", "cash", 300, hel(2026, 3, 29, 2, 30)),
		source(helsinki, "dst-day", "cash", 400, hel(2026, 3, 29, 4, 30)),
		// New York, cutoff 06:00, fall back on 2026-11-01
		source(newYork, "ny-late", "card", 500, time.Date(2026, 11, 1, 5, 30, 0, 0, ny)),
		source(newYork, "ny-day", "card", 600, time.Date(2026, 11, 1, 6, 0, 0, 0, ny)),
	)
	for _, tc := range []struct {
		restaurant, date string
		total            int64
	}{
		{helsinki, "2026-06-10", 100}, {helsinki, "2026-06-11", 200},
		{helsinki, "2026-03-28", 300}, {helsinki, "2026-03-29", 400},
		{newYork, "2026-10-31", 500}, {newYork, "2026-11-01", 600},
	} {
		rep := mustGet[report](e, reportPath(tc.restaurant, "day", tc.date, tc.date), tc.restaurant)
		if rep.RawTotalMinor != tc.total {
			t.Errorf("%s %s: %v want %d", tc.restaurant, tc.date, rep.RawTotalMinor, tc.total)
		}
		p := rep.Period
		if p.TimeZone != tenants[tc.restaurant].TimeZone || p.DayStartHour != int64(tenants[tc.restaurant].DayStartHour) {
			t.Errorf("period %+v", p)
		}
	}
}
