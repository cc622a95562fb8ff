package seed

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"

	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/services/contracts"
)

type dayTotals struct {
	gross, vat, discount, tip int64
	grossByRate, vatByRate    contracts.RateAmounts
}

func (d *dayTotals) add(gross, vat, discount, tip int64, gbr, vbr contracts.RateAmounts) {
	d.gross += gross
	d.vat += vat
	d.discount += discount
	d.tip += tip
	for _, c := range rateCategories {
		addRate(&d.grossByRate, c, rateOf(gbr, c))
		addRate(&d.vatByRate, c, rateOf(vbr, c))
	}
}

// TestAccountingReconcilesWithOrders holds the reconciliation rule of
// docs/accounting.md for every demo restaurant and business date.
func TestAccountingReconcilesWithOrders(t *testing.T) {
	g := Generator{Seed: 1}
	d := g.GenerateDirectory(SizeDemo)
	orders := generateDemoOrders(t, 1)
	var acct bytes.Buffer
	if err := DeriveAccounting(bytes.NewReader(orders), &acct); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := DeriveAccounting(bytes.NewReader(orders), &again); err != nil || !bytes.Equal(acct.Bytes(), again.Bytes()) {
		t.Fatal("the accounting records are not deterministic")
	}

	type key struct {
		restaurant string
		date       bizdate.Date
	}
	want := map[key]*dayTotals{}
	byID := map[string]contracts.OrderRecord{}
	sc := bufio.NewScanner(bytes.NewReader(orders))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var o contracts.OrderRecord
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatal(err)
		}
		byID[o.OrderID] = o
		k := key{o.RestaurantID, businessDate(o)}
		if want[k] == nil {
			want[k] = &dayTotals{}
		}
		if o.Status == "voided" {
			continue
		}
		var gbr, vbr contracts.RateAmounts
		for _, row := range o.VatRows {
			addRate(&gbr, row.Category, row.GrossAmountMinor)
			addRate(&vbr, row.Category, row.VatAmountMinor)
		}
		want[k].add(o.TotalAmountMinor, o.VatMinor, o.DiscountAmountMinor, o.TipAmountMinor, gbr, vbr)
	}

	got := map[key]*dayTotals{}
	paid := map[string]int{}
	refunded := map[string]int64{}
	seen := map[string]int{}
	sc = bufio.NewScanner(bytes.NewReader(acct.Bytes()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec contracts.AccountingRecord
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			t.Fatal(err)
		}
		loc := mustLoc(rec.TimeZone)
		switch rec.Type {
		case contracts.AccountingRecordPaymentSource:
			p := rec.PaymentSource
			seen[p.SourceKind]++
			if p.VatEvidence == contracts.VatEvidenceUnknown {
				seen["unknown-vat"]++
			}
			if p.GrossByRateMinor.Sum() != p.GrossMinor || p.VatByRateMinor.Sum() != p.VatMinor || p.VatMinor > p.GrossMinor ||
				(p.VatEvidence == contracts.VatEvidenceKnown && (p.GrossByRateMinor.Unknown != 0 || p.VatByRateMinor.Unknown != 0)) {
				t.Fatalf("source %s breaks the record rules: %+v", p.SourceRecordID, p)
			}
			date := bizdate.Of(*p.OccurredAt, loc, *rec.DayStartHour)
			k := key{rec.RestaurantID, date}
			if got[k] == nil {
				got[k] = &dayTotals{}
			}
			got[k].add(p.GrossMinor, p.VatMinor, p.DiscountMinor, p.TipMinor, p.GrossByRateMinor, p.VatByRateMinor)
			if p.SourceKind == contracts.SourceKindTabSplit {
				if p.TabSplitID == nil || p.SourceGroupID == nil {
					t.Fatalf("split without group: %+v", p)
				}
				if p.SourceRecordID[len(p.SourceRecordID)-3:] != "-s1" {
					continue // the orders count once, on the first share
				}
			}
			for _, id := range p.OrderIDs {
				o, ok := byID[id]
				if !ok || o.Status == "voided" || businessDate(o) != date {
					t.Fatalf("source %s settles order %s of another day or a voided order", p.SourceRecordID, id)
				}
				paid[id]++
			}
		case contracts.AccountingRecordRefundEvent:
			e := rec.RefundEvent
			seen[e.Kind]++
			if e.OrderID == nil {
				seen["no-order"]++
			}
			if e.LegacyTiming {
				seen["legacy"]++
			}
			if e.Kind == contracts.RefundKindRefund {
				refunded[*e.OrderID] += e.AmountMinor
				if e.AccountingImpact == nil {
					seen["unknown-impact"]++
				} else if im := e.AccountingImpact; im.GrossMinor != im.NetMinor+im.VatMinor || im.VatByRateMinor.Sum() != im.VatMinor || im.GrossMinor != -e.AmountMinor {
					t.Fatalf("refund %s impact %+v", e.RefundID, im)
				}
				if bizdate.Of(*e.OccurredAt, loc, *rec.DayStartHour).Month != e.OriginalBusinessDate.Month {
					seen["next-month"]++
				}
			} else if e.AccountingImpact != nil {
				t.Fatalf("%s with an impact", e.Kind)
			}
		}
	}
	// every business date of every demo restaurant reconciles
	days := map[string]int{}
	for k, w := range want {
		days[k.restaurant]++
		gt := got[k]
		if gt == nil {
			gt = &dayTotals{}
		}
		if *gt != *w {
			t.Errorf("%s %s: accounting %+v != orders %+v", k.restaurant, k.date, *gt, *w)
		}
	}
	if len(got) > len(want) {
		t.Errorf("accounting has days the orders do not")
	}
	for _, r := range d.Restaurants {
		if days[r.RestaurantID] > 0 && days[r.RestaurantID] < OrderDays {
			t.Errorf("restaurant %s: %d business dates", r.Name, days[r.RestaurantID])
		}
	}
	for id, o := range byID {
		if o.Status != "voided" && paid[id] != 1 {
			t.Fatalf("order %s paid %d times", id, paid[id])
		}
		if refunded[id] != o.RefundAmountMinor {
			t.Fatalf("order %s: refund events %d != refundAmountMinor %d", id, refunded[id], o.RefundAmountMinor)
		}
	}
	for _, what := range []string{"order", "tab", "tab-split", "unknown-vat", "refund", "pending_payment_return", "extra_capture_return",
		"no-order", "legacy", "unknown-impact", "next-month"} {
		if seen[what] == 0 {
			t.Errorf("the demo data has no %s", what)
		}
	}
	t.Logf("%v", seen)
}

func TestAllocateKeepsTotals(t *testing.T) {
	for _, tc := range []struct {
		total   int64
		weights []int64
	}{{10, []int64{1, 1, 1}}, {7, []int64{0, 3, 4}}, {0, []int64{1, 2}}, {5, []int64{0, 0}}, {1001, []int64{333, 333, 334}}} {
		out := allocate(tc.total, tc.weights)
		var sum int64
		for i, v := range out {
			sum += v
			if tc.weights[i] == 0 && v != 0 && tc.weights[0]+tc.weights[len(tc.weights)-1] != 0 {
				t.Errorf("%v: zero weight got %d", tc, v)
			}
		}
		if sum != tc.total {
			t.Errorf("%v: %v sums to %d", tc, out, sum)
		}
	}
	p := contracts.PaymentSourceRecord{GrossMinor: 1001, VatMinor: 150, TipMinor: 7, DiscountMinor: 5,
		GrossByRateMinor: contracts.RateAmounts{Reduced: 600, Standard: 401}, VatByRateMinor: contracts.RateAmounts{Reduced: 70, Standard: 80}}
	var g, v, tip, disc int64
	var gbr, vbr contracts.RateAmounts
	for _, part := range splitPayment(p, 3) {
		if part.GrossByRateMinor.Sum() != part.GrossMinor || part.VatByRateMinor.Sum() != part.VatMinor {
			t.Fatalf("share %+v", part)
		}
		g, v, tip, disc = g+part.GrossMinor, v+part.VatMinor, tip+part.TipMinor, disc+part.DiscountMinor
		for _, c := range rateCategories {
			addRate(&gbr, c, rateOf(part.GrossByRateMinor, c))
			addRate(&vbr, c, rateOf(part.VatByRateMinor, c))
		}
	}
	if g != 1001 || v != 150 || tip != 7 || disc != 5 || gbr != p.GrossByRateMinor || vbr != p.VatByRateMinor {
		t.Fatalf("split lost money: %d %d %d %d %+v %+v", g, v, tip, disc, gbr, vbr)
	}
}
