package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"partnerapi.dev/pkg/bizdate"
)

// Report statuses.
const (
	StatusReady          = "ready"
	StatusReviewRequired = "review_required"
	StatusBlockedStale   = "blocked_stale"
)

// Warning codes.
const (
	WarnLedgerUnavailable = "correction_ledger_unavailable"
	WarnVatIncomplete     = "vat_evidence_incomplete"
	WarnSourceChanged     = "source_changed_after_correction"
	WarnNotConserved      = "totals_not_conserved"
	WarnRefundLegacy      = "refund_timing_legacy"
	WarnRefundIncomplete  = "refund_evidence_incomplete"
)

// Report is the payment report of a day or a month (the wire shape).
type Report struct {
	RefundReporting          RefundReporting  `json:"refundReporting"`
	RestaurantID             string           `json:"restaurantId"`
	Scope                    string           `json:"scope"`
	Period                   Period           `json:"period"`
	Currency                 string           `json:"currency"`
	RawRows                  []Row            `json:"rawRows"`
	AdjustedRows             []Row            `json:"adjustedRows"`
	RawTotalMinor            int64            `json:"rawTotalMinor"`
	AdjustedTotalMinor       *int64           `json:"adjustedTotalMinor"`
	Status                   string           `json:"status"`
	Warnings                 []Warning        `json:"warnings"`
	Days                     []DayView        `json:"days"`
	Corrections              []CorrectionView `json:"corrections"`
	Sources                  []SourceView     `json:"sources"`
	AppliedCorrectionIDs     []string         `json:"appliedCorrectionIds"`
	RawSourceBasis           string           `json:"rawSourceBasis"`
	CalculationVersion       string           `json:"calculationVersion"`
	SchemaVersion            *string          `json:"schemaVersion"`
	CurrentSourceFingerprint *string          `json:"currentSourceFingerprint"`
	ReadOnly                 bool             `json:"readOnly"`
}

// RefundReporting tells how refunds are dated and whether their evidence is
// complete in the period.
type RefundReporting struct {
	Policy             string `json:"policy"`
	LegacyTiming       bool   `json:"legacyTiming"`
	IncompleteEvidence bool   `json:"incompleteEvidence"`
}

// Period is the report's dates and the restaurant's day settings.
type Period struct {
	StartDate    bizdate.Date `json:"startDate"`
	EndDate      bizdate.Date `json:"endDate"`
	TimeZone     string       `json:"timeZone"`
	DayStartHour int          `json:"dayStartHour"`
}

// Row is one payment method's totals.
type Row struct {
	Key              string       `json:"key"`
	Label            string       `json:"label"`
	TransactionCount int64        `json:"transactionCount"`
	GrossMinor       int64        `json:"grossMinor"`
	NetMinor         int64        `json:"netMinor"`
	VatMinor         int64        `json:"vatMinor"`
	GrossByRateMinor *RateAmounts `json:"grossByRateMinor"`
	VatByRateMinor   *RateAmounts `json:"vatByRateMinor"`
}

// Warning says why a report is not ready, or what to know about it.
type Warning struct {
	Code         string        `json:"code"`
	Message      string        `json:"message"`
	BusinessDate *bizdate.Date `json:"businessDate"`
	CorrectionID *string       `json:"correctionId"`
}

// DayView is one business date of the report.
type DayView struct {
	BusinessDate       bizdate.Date `json:"businessDate"`
	TransactionCount   int64        `json:"transactionCount"`
	RawTotalMinor      int64        `json:"rawTotalMinor"`
	AdjustedTotalMinor *int64       `json:"adjustedTotalMinor"`
	CorrectionCount    int          `json:"correctionCount"`
}

// CorrectionView is one ledger row as reported.
type CorrectionView struct {
	CorrectionID         string       `json:"correctionId"`
	BatchID              string       `json:"batchId"`
	RevisionID           string       `json:"revisionId"`
	BusinessDate         bizdate.Date `json:"businessDate"`
	Action               string       `json:"action"`
	SourceKey            string       `json:"sourceKey"`
	FromMethodKey        string       `json:"fromMethodKey"`
	ToMethodKey          string       `json:"toMethodKey"`
	GrossMinor           int64        `json:"grossMinor"`
	Reason               string       `json:"reason"`
	CreatedAt            time.Time    `json:"createdAt"`
	UndoneByCorrectionID *string      `json:"undoneByCorrectionId"`
}

// SourceView is a payment source as the workspace and the report show it.
type SourceView struct {
	SourceKind            string       `json:"sourceKind"`
	SourceRecordID        string       `json:"sourceRecordId"`
	SourceKey             string       `json:"sourceKey"`
	ReceiptHash           string       `json:"receiptHash"`
	ParentReceiptHash     *string      `json:"parentReceiptHash"`
	ComponentID           *string      `json:"componentId"`
	TabSplitID            *string      `json:"tabSplitId"`
	BusinessDate          bizdate.Date `json:"businessDate"`
	MethodKey             string       `json:"methodKey"`
	GrossMinor            int64        `json:"grossMinor"`
	TransactionCount      int64        `json:"transactionCount"`
	SourceGroupID         *string      `json:"sourceGroupId"`
	SourceGroupGrossMinor *int64       `json:"sourceGroupGrossMinor"`
	GrossByRateMinor      RateAmounts  `json:"grossByRateMinor"`
	VatByRateMinor        RateAmounts  `json:"vatByRateMinor"`
	ResolutionStatus      string       `json:"resolutionStatus"`
}

// ViewSource gives a source its wire shape.
func ViewSource(s Source) SourceView {
	return SourceView{
		SourceKind: s.Kind, SourceRecordID: s.RecordID, SourceKey: s.Key(), ReceiptHash: s.ReceiptHash,
		ParentReceiptHash: s.ParentReceiptHash, ComponentID: s.ComponentID, TabSplitID: s.TabSplitID,
		BusinessDate: s.BusinessDate, MethodKey: s.Method, GrossMinor: s.Amounts.Gross,
		TransactionCount: s.Amounts.Count, SourceGroupID: s.GroupID, SourceGroupGrossMinor: s.GroupGross,
		GrossByRateMinor: s.Amounts.GrossByRate, VatByRateMinor: s.Amounts.VatByRate, ResolutionStatus: "resolved",
	}
}

// ReportInput is everything a report is calculated from.
type ReportInput struct {
	Tenant     Tenant
	Scope      string
	Start, End bizdate.Date
	Days       []DayTotals
	// Ledger is the period's ledger rows oldest first; LedgerUnavailable
	// means they could not be read (the report then cannot be ready).
	Ledger            []Correction
	LedgerUnavailable bool
	// Current holds the current state of every source the ledger names.
	Current  map[string]Source
	Refunds  RefundFlags
	ReadOnly bool
}

// BuildReport calculates the report: raw rows from the daily totals,
// adjusted rows by moving each active correction's amounts between methods,
// and the status with the warnings that explain it.
func BuildReport(in ReportInput) Report {
	r := Report{
		RefundReporting:    RefundReporting{Policy: RefundPolicy, LegacyTiming: in.Refunds.Legacy, IncompleteEvidence: in.Refunds.Incomplete},
		RestaurantID:       in.Tenant.ID,
		Scope:              in.Scope,
		Period:             Period{in.Start, in.End, in.Tenant.TimeZone, in.Tenant.DayStartHour},
		Currency:           in.Tenant.Currency,
		Warnings:           []Warning{},
		Days:               []DayView{},
		Corrections:        []CorrectionView{},
		Sources:            []SourceView{},
		RawSourceBasis:     RawSourceBasis,
		CalculationVersion: CalculationVersion,
		ReadOnly:           in.ReadOnly,
	}
	raw := map[string]*Amounts{}
	byDay := map[bizdate.Date]DayTotals{}
	var fp strings.Builder
	for _, d := range in.Days {
		byDay[d.Date] = d
		for _, m := range d.Methods {
			a := raw[m.Method]
			if a == nil {
				a = &Amounts{}
				raw[m.Method] = a
			}
			a.Add(m.Amounts, 1)
		}
		if d.UnknownVat > 0 {
			date := d.Date
			r.Warnings = append(r.Warnings, Warning{Code: WarnVatIncomplete, BusinessDate: &date,
				Message: "Some payments of this business date have no VAT evidence by rate; the adjusted report is held back until they are resolved at the source."})
		}
		if d.SourceCount > 0 {
			fp.WriteString(d.Date.String() + "=" + d.Fingerprint + ";")
		}
	}
	if fp.Len() > 0 {
		sum := sha256.Sum256([]byte(fp.String()))
		s := hex.EncodeToString(sum[:])
		r.CurrentSourceFingerprint = &s
	}
	r.RawRows = rows(raw, true)
	for _, row := range r.RawRows {
		r.RawTotalMinor += row.GrossMinor
	}

	stale := false
	active := map[string]Correction{} // correction id -> active correction
	perDay := map[bizdate.Date]int{}
	adjusted := map[string]*Amounts{}
	for k, a := range raw {
		c := *a
		adjusted[k] = &c
	}
	if in.LedgerUnavailable {
		r.Warnings = append(r.Warnings, Warning{Code: WarnLedgerUnavailable,
			Message: "The correction ledger could not be read; raw totals are shown and corrections are not applied. Try again shortly."})
	} else {
		undoneBy := map[string]string{}
		for _, c := range in.Ledger {
			if c.Action == "undo" && c.Undoes != nil {
				undoneBy[*c.Undoes] = c.ID
			}
		}
		seen := map[string]bool{}
		for _, c := range in.Ledger {
			v := CorrectionView{CorrectionID: c.ID, BatchID: c.BatchID, RevisionID: c.RevisionID, BusinessDate: c.Date,
				Action: c.Action, SourceKey: c.SourceKey(), FromMethodKey: c.From, ToMethodKey: c.To,
				GrossMinor: c.Moved.Gross, Reason: c.Reason, CreatedAt: c.CreatedAt.UTC()}
			if u, ok := undoneBy[c.ID]; ok {
				v.UndoneByCorrectionID = &u
			}
			r.Corrections = append(r.Corrections, v)
			if cur, ok := in.Current[c.SourceKey()]; ok && !seen[c.SourceKey()] {
				seen[c.SourceKey()] = true
				r.Sources = append(r.Sources, ViewSource(cur))
			}
			if c.Action != "correct" || v.UndoneByCorrectionID != nil {
				continue
			}
			active[c.ID] = c
			r.AppliedCorrectionIDs = append(r.AppliedCorrectionIDs, c.ID)
			perDay[c.Date]++
			if cur, ok := in.Current[c.SourceKey()]; !ok || cur.Fingerprint != c.SourceFingerprint {
				stale = true
				date, id := c.Date, c.ID
				r.Warnings = append(r.Warnings, Warning{Code: WarnSourceChanged, BusinessDate: &date, CorrectionID: &id,
					Message: "A corrected payment changed at the source after it was corrected; undo the correction and correct the payment again."})
			}
			for _, k := range []string{c.From, c.To} {
				if adjusted[k] == nil {
					adjusted[k] = &Amounts{}
				}
			}
			adjusted[c.From].Add(c.Moved, -1)
			adjusted[c.To].Add(c.Moved, 1)
		}
	}
	if r.AppliedCorrectionIDs == nil {
		r.AppliedCorrectionIDs = []string{}
	}
	conserved := conserves(raw, adjusted)
	if !conserved {
		r.Warnings = append(r.Warnings, Warning{Code: WarnNotConserved,
			Message: "The corrected totals do not add up to the raw totals; review the corrections of the period."})
	}
	if in.Refunds.Legacy {
		r.Warnings = append(r.Warnings, Warning{Code: WarnRefundLegacy,
			Message: "Some refunds of the period were dated by the older booking time rather than the time money moved."})
	}
	if in.Refunds.Incomplete {
		r.Warnings = append(r.Warnings, Warning{Code: WarnRefundIncomplete,
			Message: "Some refunds of the period have no known accounting impact; see the refund events."})
	}
	switch {
	case stale:
		r.Status = StatusBlockedStale
	case in.LedgerUnavailable || !conserved || hasWarning(r.Warnings, WarnVatIncomplete):
		r.Status = StatusReviewRequired
	default:
		r.Status = StatusReady
	}
	if r.Status == StatusReady {
		r.AdjustedRows = rows(adjusted, false)
		total := int64(0)
		for _, row := range r.AdjustedRows {
			total += row.GrossMinor
		}
		r.AdjustedTotalMinor = &total
	}
	for d := in.Start; !d.After(in.End); d = d.AddDays(1) {
		day := byDay[d]
		v := DayView{BusinessDate: d, CorrectionCount: perDay[d]}
		for _, m := range day.Methods {
			v.TransactionCount += m.Amounts.Count
			v.RawTotalMinor += m.Amounts.Gross
		}
		if r.Status == StatusReady {
			t := v.RawTotalMinor
			v.AdjustedTotalMinor = &t
		}
		r.Days = append(r.Days, v)
	}
	return r
}

func hasWarning(ws []Warning, code string) bool {
	return slices.ContainsFunc(ws, func(w Warning) bool { return w.Code == code })
}

// conserves reports whether adjusted keeps raw's gross, VAT (so net) and
// count totals, and moved no method below zero.
func conserves(raw, adjusted map[string]*Amounts) bool {
	var a, b Amounts
	for _, x := range raw {
		a.Add(*x, 1)
	}
	for _, x := range adjusted {
		if x.Gross < 0 || x.Count < 0 {
			return false
		}
		b.Add(*x, 1)
	}
	return a == b
}

// rows lists the methods in report order; keepZero keeps a method whose
// sums are all zero (a raw method with sources).
func rows(m map[string]*Amounts, keepZero bool) []Row {
	keys := make([]string, 0, len(m))
	for k, a := range m {
		if keepZero || *a != (Amounts{}) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b string) int {
		if d := methodOrder(a) - methodOrder(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	out := make([]Row, 0, len(keys))
	for _, k := range keys {
		a := m[k]
		gr, vr := a.GrossByRate, a.VatByRate
		out = append(out, Row{Key: k, Label: MethodLabel(k), TransactionCount: a.Count, GrossMinor: a.Gross,
			NetMinor: a.Gross - a.Vat, VatMinor: a.Vat, GrossByRateMinor: &gr, VatByRateMinor: &vr})
	}
	return out
}
