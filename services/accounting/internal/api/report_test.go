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
func checkArithmetic(t *testing.T, rep map[string]any) {
	t.Helper()
	sums := func(rows []any) (g, n, v, c int64) {
		for _, r := range rows {
			row := r.(map[string]any)
			rg, rn, rv := num(row["grossMinor"]), num(row["netMinor"]), num(row["vatMinor"])
			if rg != rn+rv {
				t.Errorf("row %v: gross %d != net %d + vat %d", row["key"], rg, rn, rv)
			}
			var byRate, vatByRate int64
			for _, x := range row["grossByRateMinor"].(map[string]any) {
				byRate += num(x)
			}
			for _, x := range row["vatByRateMinor"].(map[string]any) {
				vatByRate += num(x)
			}
			if byRate != rg || vatByRate != rv {
				t.Errorf("row %v: rates %d/%d do not sum to gross %d / vat %d", row["key"], byRate, vatByRate, rg, rv)
			}
			g, n, v, c = g+rg, n+rn, v+rv, c+num(row["transactionCount"])
		}
		return
	}
	g, n, v, c := sums(rep["rawRows"].([]any))
	if g != num(rep["rawTotalMinor"]) {
		t.Errorf("rawTotalMinor %d != sum of rows %d", num(rep["rawTotalMinor"]), g)
	}
	if rep["status"] == "ready" {
		ag, an, av, ac := sums(rep["adjustedRows"].([]any))
		if ag != g || an != n || av != v || ac != c {
			t.Errorf("adjusted (%d %d %d %d) does not conserve raw (%d %d %d %d)", ag, an, av, ac, g, n, v, c)
		}
		if num(rep["adjustedTotalMinor"]) != ag {
			t.Errorf("adjustedTotalMinor %v != %d", rep["adjustedTotalMinor"], ag)
		}
	} else if rep["adjustedRows"] != nil || rep["adjustedTotalMinor"] != nil {
		t.Errorf("status %v with adjusted values", rep["status"])
	}
	var dayTotal, dayCount int64
	for _, d := range rep["days"].([]any) {
		dayTotal += num(d.(map[string]any)["rawTotalMinor"])
		dayCount += num(d.(map[string]any)["transactionCount"])
	}
	if dayTotal != g || dayCount != c {
		t.Errorf("days sum %d/%d != rows %d/%d", dayTotal, dayCount, g, c)
	}
}

func rowsByKey(rep map[string]any, field string) map[string]map[string]any {
	out := map[string]map[string]any{}
	rows, _ := rep[field].([]any)
	for _, r := range rows {
		row := r.(map[string]any)
		out[row["key"].(string)] = row
	}
	return out
}

func warningCodes(rep map[string]any) []string {
	var out []string
	for _, w := range rep["warnings"].([]any) {
		out = append(out, w.(map[string]any)["code"].(string))
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

	status, body := e.get(reportPath(helsinki, "month", "2026-06-01", "2026-06-30"), helsinki)
	if status != http.StatusOK {
		t.Fatalf("%d %v", status, body)
	}
	month := data(t, body)
	checkArithmetic(t, month)
	if month["status"] != "ready" || month["rawSourceBasis"] != "services_accounting" || month["readOnly"] != true {
		t.Fatalf("month: %v %v %v", month["status"], month["rawSourceBasis"], month["readOnly"])
	}
	if len(month["days"].([]any)) != 30 {
		t.Fatalf("days: %d", len(month["days"].([]any)))
	}
	sum := map[string][4]int64{}
	for day := 1; day <= 30; day++ {
		d := fmt.Sprintf("2026-06-%02d", day)
		_, body := e.get(reportPath(helsinki, "day", d, d), helsinki)
		rep := data(t, body)
		checkArithmetic(t, rep)
		for k, row := range rowsByKey(rep, "rawRows") {
			s := sum[k]
			sum[k] = [4]int64{s[0] + num(row["grossMinor"]), s[1] + num(row["netMinor"]), s[2] + num(row["vatMinor"]), s[3] + num(row["transactionCount"])}
		}
	}
	got := rowsByKey(month, "rawRows")
	if len(got) != len(sum) {
		t.Fatalf("month methods %d, days %d", len(got), len(sum))
	}
	for k, s := range sum {
		row := got[k]
		if [4]int64{num(row["grossMinor"]), num(row["netMinor"]), num(row["vatMinor"]), num(row["transactionCount"])} != s {
			t.Errorf("%s: month %v != sum of days %v", k, row, s)
		}
	}
	if month["currentSourceFingerprint"] == nil {
		t.Error("no source fingerprint")
	}
	// An empty future month holds nothing and is ready.
	_, body = e.get(reportPath(helsinki, "month", "2027-02-01", "2027-02-28"), helsinki)
	fut := data(t, body)
	if fut["status"] != "ready" || num(fut["rawTotalMinor"]) != 0 || fut["currentSourceFingerprint"] != nil {
		t.Fatalf("future: %v", fut)
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
	status, _ := e.get(reportPath(other, "day", "2026-06-01", "2026-06-01"), helsinki)
	if status != http.StatusNotFound {
		t.Fatalf("other restaurant: %d", status)
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
	_, body := e.get(reportPath(helsinki, "day", "2026-06-10", "2026-06-10"), helsinki)
	rep := data(t, body)
	checkArithmetic(t, rep)
	if rep["status"] != "ready" || len(warningCodes(rep)) != 0 {
		t.Fatalf("ready day: %v %v", rep["status"], rep["warnings"])
	}
	// unknown VAT evidence
	_, body = e.get(reportPath(helsinki, "day", "2026-06-11", "2026-06-11"), helsinki)
	rep = data(t, body)
	checkArithmetic(t, rep)
	if rep["status"] != "review_required" || strings.Join(warningCodes(rep), ",") != "vat_evidence_incomplete" {
		t.Fatalf("unknown VAT: %v %v", rep["status"], rep["warnings"])
	}
	if w := rep["warnings"].([]any)[0].(map[string]any); w["businessDate"] != "2026-06-11" {
		t.Fatalf("warning date: %v", w)
	}
	if rows := rowsByKey(rep, "rawRows"); num(rows["card"]["grossByRateMinor"].(map[string]any)["unknown"]) != 1200 {
		t.Fatalf("unknown rate: %v", rows["card"])
	}
	// refund flags: informational, the day stays ready
	_, body = e.get(reportPath(helsinki, "day", "2026-06-12", "2026-06-12"), helsinki)
	rep = data(t, body)
	rr := rep["refundReporting"].(map[string]any)
	if rep["status"] != "ready" || rr["legacyTiming"] != true || rr["incompleteEvidence"] != false || rr["policy"] != "refund-event-date/v1" {
		t.Fatalf("legacy day: %v %v", rep["status"], rr)
	}
	if strings.Join(warningCodes(rep), ",") != "refund_timing_legacy" {
		t.Fatalf("legacy warnings: %v", rep["warnings"])
	}
	_, body = e.get(reportPath(helsinki, "month", "2026-06-01", "2026-06-30"), helsinki)
	rep = data(t, body)
	checkArithmetic(t, rep)
	if got := strings.Join(warningCodes(rep), ","); got != "vat_evidence_incomplete,refund_timing_legacy,refund_evidence_incomplete" || rep["status"] != "review_required" {
		t.Fatalf("month: %v %s", rep["status"], got)
	}

	// the ledger cannot be read: raw values still answered, not ready
	if err := e.db.Gorm.Exec(`ALTER TABLE correction_ledger RENAME TO correction_ledger_away`).Error; err != nil {
		t.Fatal(err)
	}
	status, body := e.get(reportPath(helsinki, "day", "2026-06-10", "2026-06-10"), helsinki)
	rep = data(t, body)
	if status != http.StatusOK || rep["status"] != "review_required" || strings.Join(warningCodes(rep), ",") != "correction_ledger_unavailable" || num(rep["rawTotalMinor"]) != 3500 || rep["adjustedRows"] != nil {
		t.Fatalf("ledger down: %d %v", status, rep)
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
		_, body := e.get(reportPath(tc.restaurant, "day", tc.date, tc.date), tc.restaurant)
		rep := data(t, body)
		if num(rep["rawTotalMinor"]) != tc.total {
			t.Errorf("%s %s: %v want %d", tc.restaurant, tc.date, rep["rawTotalMinor"], tc.total)
		}
		p := rep["period"].(map[string]any)
		if p["timeZone"] != tenants[tc.restaurant].TimeZone || num(p["dayStartHour"]) != int64(tenants[tc.restaurant].DayStartHour) {
			t.Errorf("period %v", p)
		}
	}
}
