package domain

import (
	"slices"
	"testing"
	"time"

	"partnerapi.dev/pkg/bizdate"
)

func TestBuildReportStatuses(t *testing.T) {
	d := bizdate.Date{Year: 2026, Month: 7, Day: 1}
	card := Amounts{Gross: 1000, Vat: 100, Count: 2, GrossByRate: RateAmounts{Standard: 1000}, VatByRate: RateAmounts{Standard: 100}}
	day := DayTotals{Date: d, SourceCount: 2, Fingerprint: "f", Methods: []MethodTotals{{Method: "card", Amounts: card}}}
	src := Source{Kind: "order", RecordID: "o-1", BusinessDate: d, Method: "card", Fingerprint: "src-1",
		Amounts: Amounts{Gross: 400, Vat: 40, Count: 1, GrossByRate: RateAmounts{Standard: 400}, VatByRate: RateAmounts{Standard: 40}}}
	correction := Correction{ID: "c1", Date: d, Action: "correct", SourceKind: "order", SourceRecordID: "o-1", From: "card", To: "cash",
		Moved: src.Amounts, SourceFingerprint: "src-1", CreatedAt: time.Unix(0, 0)}
	tooMuch := correction
	tooMuch.Moved.Gross, tooMuch.Moved.Count = 5000, 3
	changed := src
	changed.Fingerprint = "src-2"
	unknown := day
	unknown.UnknownVat = 1

	for _, tc := range []struct {
		name     string
		day      DayTotals
		ledger   []Correction
		current  Source
		down     bool
		status   string
		warnings []string
	}{
		{"ready", day, []Correction{correction}, src, false, StatusReady, nil},
		{"unknown VAT", unknown, nil, src, false, StatusReviewRequired, []string{WarnVatIncomplete}},
		{"ledger down", day, nil, src, true, StatusReviewRequired, []string{WarnLedgerUnavailable}},
		{"changed source", day, []Correction{correction}, changed, false, StatusBlockedStale, []string{WarnSourceChanged}},
		{"not conserved", day, []Correction{tooMuch}, src, false, StatusReviewRequired, []string{WarnNotConserved}},
		{"stale wins over review", unknown, []Correction{correction}, changed, false, StatusBlockedStale, []string{WarnVatIncomplete, WarnSourceChanged}},
	} {
		r := BuildReport(ReportInput{Tenant: Tenant{ID: "r"}, Scope: "day", Start: d, End: d, Days: []DayTotals{tc.day},
			Ledger: tc.ledger, LedgerUnavailable: tc.down, Current: map[string]Source{"order:o-1": tc.current}})
		var codes []string
		for _, w := range r.Warnings {
			codes = append(codes, w.Code)
		}
		if r.Status != tc.status || !slices.Equal(codes, tc.warnings) {
			t.Errorf("%s: %s %v, want %s %v", tc.name, r.Status, codes, tc.status, tc.warnings)
		}
		if (r.Status == StatusReady) != (r.AdjustedRows != nil && r.AdjustedTotalMinor != nil) {
			t.Errorf("%s: adjusted values with status %s", tc.name, r.Status)
		}
		if r.RawTotalMinor != 1000 && !tc.down {
			t.Errorf("%s: raw total %d", tc.name, r.RawTotalMinor)
		}
	}
}

func TestPreviewFingerprintCoversEveryPart(t *testing.T) {
	d := bizdate.Date{Year: 2026, Month: 7, Day: 1}
	to := "cash"
	in := CorrectionInput{BusinessDate: &d, SourceKind: "order", SourceRecordID: "o-1", Action: "correct", ToMethodKey: &to, Reason: "r"}
	at := time.Date(2026, 7, 20, 10, 5, 0, 0, time.UTC)
	base := PreviewFingerprint("r1", in, "rev", "src", at)
	if base != PreviewFingerprint("r1", in, "rev", "src", at) || len(base) != 64 {
		t.Fatal("not stable")
	}
	other := in
	other.Reason = "s"
	for name, fp := range map[string]string{
		"restaurant": PreviewFingerprint("r2", in, "rev", "src", at),
		"input":      PreviewFingerprint("r1", other, "rev", "src", at),
		"revision":   PreviewFingerprint("r1", in, "rev2", "src", at),
		"source":     PreviewFingerprint("r1", in, "rev", "src2", at),
		"expiry":     PreviewFingerprint("r1", in, "rev", "src", at.Add(time.Second)),
	} {
		if fp == base {
			t.Errorf("%s does not change the fingerprint", name)
		}
	}
}
