package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func refundIDs(page refundPage) []string {
	var out []string
	for _, e := range page.Events {
		out = append(out, e.RefundID)
	}
	return out
}

func TestRefundEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.ingest(
		source(helsinki, "june-sale", "card", 5000, hel(2026, 6, 30, 20, 0)),
		// a June sale refunded in July appears in July; 02:00 on 1 July is still 30 June
		refund(helsinki, "r-june", "refund", "june-sale", 1000, hel(2026, 7, 1, 2, 0), set("originalBusinessDate", "2026-06-30")),
		refund(helsinki, "r-july", "refund", "june-sale", 2000, hel(2026, 7, 1, 12, 0), set("originalBusinessDate", "2026-06-30")),
		refund(helsinki, "r-orphan", "refund", nil, 700, hel(2026, 7, 2, 12, 0), set("accountingImpact", nil)),
		refund(helsinki, "r-pending", "pending_payment_return", "p-1", 400, hel(2026, 7, 3, 12, 0)),
		refund(helsinki, "r-extra", "extra_capture_return", "p-2", 50, hel(2026, 7, 3, 12, 30), set("legacyTiming", true)),
		refund(other, "r-other", "refund", "x", 10, hel(2026, 7, 1, 12, 0)),
	)
	r := base(helsinki)
	page := mustGet[refundPage](e, r+"/refunds?start_date=2026-07-01&end_date=2026-07-31", helsinki)
	if strings.Join(refundIDs(page), ",") != "r-july,r-orphan,r-pending,r-extra" {
		t.Fatalf("july: %v", refundIDs(page))
	}
	if !page.LegacyTiming || !page.IncompleteEvidence || page.NextCursor != nil || page.Truncated || page.Policy != "refund-event-date/v1" {
		t.Fatalf("flags: %+v", page)
	}
	ev := page.Events
	july := ev[0]
	if deref(july.OrderID) != "june-sale" || deref(july.OriginalBusinessDate) != "2026-06-30" || july.AmountMinor != 2000 ||
		july.AccountingImpact == nil || july.AccountingImpact.GrossMinor != -2000 {
		t.Fatalf("july event: %+v", july)
	}
	if ev[1].OrderID != nil || ev[1].AccountingImpact != nil || ev[2].AccountingImpact != nil {
		t.Fatalf("orphan or non-sale: %+v", ev)
	}
	if got := strings.Join(refundIDs(mustGet[refundPage](e, r+"/refunds?start_date=2026-06-01&end_date=2026-06-30", helsinki)), ","); got != "r-june" {
		t.Fatalf("june: %s", got)
	}
	// order filter: only that order's events, never the orphan
	if got := strings.Join(refundIDs(mustGet[refundPage](e, r+"/refunds?start_date=2026-06-01&end_date=2026-07-01&order_id=june-sale", helsinki)), ","); got != "r-june,r-july" {
		t.Fatalf("order filter: %s", got)
	}

	// pages of one with page-local flags; the cursor is bound to its filters
	var ids []string
	cursor := ""
	flags := []bool{}
	for i := 0; i < 10; i++ {
		q := r + "/refunds?start_date=2026-07-01&end_date=2026-07-31&limit=1"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		page := mustGet[refundPage](e, q, helsinki)
		ids = append(ids, refundIDs(page)...)
		flags = append(flags, page.LegacyTiming)
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	if strings.Join(ids, ",") != "r-july,r-orphan,r-pending,r-extra" || fmt.Sprint(flags) != "[false false false true]" {
		t.Fatalf("paged: %v %v", ids, flags)
	}
	next := *mustGet[refundPage](e, r+"/refunds?start_date=2026-07-01&end_date=2026-07-31&limit=1", helsinki).NextCursor
	for name, q := range map[string]string{
		"other filters": "start_date=2026-07-01&end_date=2026-07-30&cursor=" + url.QueryEscape(next),
		"tampered":      "start_date=2026-07-01&end_date=2026-07-31&cursor=" + url.QueryEscape(next[:len(next)-2]+"xx"),
		"window":        "start_date=2026-07-01&end_date=2026-08-01",
		"limit 0":       "start_date=2026-07-01&end_date=2026-07-31&limit=0",
		"limit 201":     "start_date=2026-07-01&end_date=2026-07-31&limit=201",
		"no dates":      "limit=5",
		"empty order":   "start_date=2026-07-01&end_date=2026-07-31&order_id=",
	} {
		if a := e.refusal(r+"/refunds?"+q, helsinki, nil); a.Status != http.StatusBadRequest {
			t.Errorf("%s: %d %s", name, a.Status, a.Raw)
		}
	}
	// the limit is not part of the binding: the same filters with another page size continue
	if a := get[refundPage](e, r+"/refunds?start_date=2026-07-01&end_date=2026-07-31&limit=2&cursor="+url.QueryEscape(next), helsinki); a.Status != 200 {
		t.Fatalf("other limit: %d", a.Status)
	}
}

func TestIngestion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	good := source(helsinki, "i-1", "card", 1000, hel(2026, 6, 1, 12, 0))
	bad := source(helsinki, "i-2", "card", 1000, hel(2026, 6, 1, 12, 0), set("grossByRateMinor", rec{"zero": 0, "special": 0, "reduced": 1, "standard": 0, "unknown": 0}))
	status, raw := e.ingestRaw(ndjson(good, bad))
	if status != 400 || !strings.Contains(string(raw), "line 2") || !strings.Contains(string(raw), "grossByRateMinor") {
		t.Fatalf("bad line: %d %s", status, raw)
	}
	if mustGet[report](e, reportPath(helsinki, "day", "2026-06-01", "2026-06-01"), helsinki).RawTotalMinor != 0 {
		t.Fatal("a batch with a bad line stored something")
	}
	for name, r := range map[string]rec{
		"unknown method": source(helsinki, "x", "bitcoin", 1, hel(2026, 6, 1, 12, 0)),
		"unknown field":  source(helsinki, "x", "card", 1, hel(2026, 6, 1, 12, 0), set("extra", 1)),
		"vat over gross": source(helsinki, "x", "card", 10, hel(2026, 6, 1, 12, 0), set("vatMinor", 11)),
		"no orders":      source(helsinki, "x", "card", 10, hel(2026, 6, 1, 12, 0), set("orderIds", []string{})),
		"split no group": source(helsinki, "x", "card", 10, hel(2026, 6, 1, 12, 0), set("sourceKind", "tab-split")),
		"impact on pending": refund(helsinki, "x", "pending_payment_return", "o", 10, hel(2026, 6, 1, 12, 0),
			set("accountingImpact", rec{"grossMinor": -10, "netMinor": -10, "vatMinor": 0, "vatByRateMinor": rec{}})),
		"unsigned impact": refund(helsinki, "x", "refund", "o", 10, hel(2026, 6, 1, 12, 0),
			set("accountingImpact", rec{"grossMinor": 10, "netMinor": 10, "vatMinor": 0, "vatByRateMinor": rec{}})),
	} {
		if status, raw := e.ingestRaw(ndjson(r)); status != 400 || !strings.Contains(string(raw), "line 1") {
			t.Errorf("%s: %d %s", name, status, raw)
		}
	}
	if status, _ := e.do(http.MethodPost, "/internal/v1/accounting/ingest", "", strings.NewReader(ndjson(good)), map[string]string{"Authorization": "Bearer wrong-token-0123456789"}); status != 401 {
		t.Fatalf("wrong token: %d", status)
	}
	// idempotent by natural key: twice is once
	e.ingest(good, refund(helsinki, "rf-1", "refund", "i-1", 100, hel(2026, 6, 2, 12, 0)))
	e.ingest(good, refund(helsinki, "rf-1", "refund", "i-1", 100, hel(2026, 6, 2, 12, 0)))
	rep := mustGet[report](e, reportPath(helsinki, "day", "2026-06-01", "2026-06-01"), helsinki)
	if rep.RawTotalMinor != 1000 {
		t.Fatalf("twice: %v", rep.RawTotalMinor)
	}
	fp := rep.CurrentSourceFingerprint
	// a changed source replaces itself, also when it moves to another day
	e.ingest(source(helsinki, "i-1", "cash", 1100, hel(2026, 6, 3, 12, 0)))
	if rep := mustGet[report](e, reportPath(helsinki, "day", "2026-06-01", "2026-06-01"), helsinki); rep.RawTotalMinor != 0 || reflect.DeepEqual(rep.CurrentSourceFingerprint, fp) {
		t.Fatalf("moved away: %+v", rep)
	}
	if rows := rowsByKey(mustGet[report](e, reportPath(helsinki, "day", "2026-06-03", "2026-06-03"), helsinki).RawRows); rows["cash"].GrossMinor != 1100 || len(rows) != 1 {
		t.Fatalf("moved to: %+v", rows)
	}
	if got := refundIDs(mustGet[refundPage](e, base(helsinki)+"/refunds?start_date=2026-06-01&end_date=2026-06-30", helsinki)); len(got) != 1 {
		t.Fatalf("refund twice: %v", got)
	}
}

func TestAccountingSummary(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.ingest(
		source(helsinki, "s-1", "card", 2000, hel(2026, 6, 10, 12, 0), set("discountMinor", 150), set("tipMinor", 100)),
		source(helsinki, "s-2", "cash", 500, hel(2026, 6, 11, 12, 0), set("tipMinor", 20)),
		refund(helsinki, "sr-1", "refund", "s-1", 570, hel(2026, 6, 12, 12, 0)),
		refund(helsinki, "sr-2", "pending_payment_return", "s-9", 300, hel(2026, 6, 12, 13, 0)),
		refund(helsinki, "sr-3", "refund", "s-1", 100, hel(2026, 7, 1, 12, 0)),
	)
	s := mustGet[summary](e, base(helsinki)+"/accounting-summary?scope=month&start_date=2026-06-01&end_date=2026-06-30", helsinki)
	sales := s.Sales
	var g, n, v int64
	for _, row := range sales.ByRate {
		if row.GrossMinor != row.NetMinor+row.VatMinor {
			t.Errorf("rate row %+v", row)
		}
		g, n, v = g+row.GrossMinor, n+row.NetMinor, v+row.VatMinor
	}
	if g != 2500 || sales.GrossMinor != g || sales.NetMinor != n || sales.VatMinor != v || sales.TransactionCount != 2 {
		t.Fatalf("sales %+v", sales)
	}
	// the summary's sales equal the payment report's raw totals
	if mustGet[report](e, reportPath(helsinki, "month", "2026-06-01", "2026-06-30"), helsinki).RawTotalMinor != g {
		t.Fatal("summary and report disagree")
	}
	rf := s.Refunds
	if s.DiscountsMinor != 150 || s.TipsMinor != 120 || rf.Count != 1 || rf.AmountMinor != 570 ||
		rf.GrossMinor != -570 || rf.NonSaleReturnAmountMinor != 300 || len(rf.Days) != 1 {
		t.Fatalf("summary %+v", s)
	}
}
