package domain

import (
	"context"

	"partnerapi.dev/pkg/bizdate"
)

// Summary is the accounting summary (an extension of the contract): sales
// by VAT rate category, discounts, tips and refunds of the same period,
// currency, time zone and day cutoff as the payment report, so a partner can
// post sales and VAT from it and take only the method allocation from the
// report.
type Summary struct {
	RestaurantID    string          `json:"restaurantId"`
	Scope           string          `json:"scope"`
	Period          Period          `json:"period"`
	Currency        string          `json:"currency"`
	Sales           SalesSummary    `json:"sales"`
	DiscountsMinor  int64           `json:"discountsMinor"`
	TipsMinor       int64           `json:"tipsMinor"`
	Refunds         RefundSummary   `json:"refunds"`
	RefundReporting RefundReporting `json:"refundReporting"`
	// VatEvidenceComplete is false when a sale of the period has VAT that
	// cannot be traced to rates (its amounts are under category unknown).
	VatEvidenceComplete bool   `json:"vatEvidenceComplete"`
	RawSourceBasis      string `json:"rawSourceBasis"`
	CalculationVersion  string `json:"calculationVersion"`
}

// SalesSummary is the period's sales.
type SalesSummary struct {
	TransactionCount int64     `json:"transactionCount"`
	GrossMinor       int64     `json:"grossMinor"`
	NetMinor         int64     `json:"netMinor"`
	VatMinor         int64     `json:"vatMinor"`
	ByRate           []RateRow `json:"byRate"`
}

// RateRow is one VAT rate category's sales.
type RateRow struct {
	Category   string `json:"category"`
	GrossMinor int64  `json:"grossMinor"`
	NetMinor   int64  `json:"netMinor"`
	VatMinor   int64  `json:"vatMinor"`
}

// RefundSummary is the period's refund events by refund business date.
type RefundSummary struct {
	Policy string `json:"policy"`
	// Count and AmountMinor cover the refunds of sales (kind refund).
	Count       int64 `json:"count"`
	AmountMinor int64 `json:"amountMinor"`
	// GrossMinor, NetMinor and VatMinor sum the known signed impacts.
	GrossMinor         int64 `json:"grossMinor"`
	NetMinor           int64 `json:"netMinor"`
	VatMinor           int64 `json:"vatMinor"`
	UnknownImpactCount int64 `json:"unknownImpactCount"`
	// NonSaleReturns are pending-payment and extra-capture returns: money
	// back with no sale and no VAT.
	NonSaleReturnCount       int64              `json:"nonSaleReturnCount"`
	NonSaleReturnAmountMinor int64              `json:"nonSaleReturnAmountMinor"`
	Days                     []RefundDaySummary `json:"days"`
}

// RefundDaySummary is one refund business date's refunds.
type RefundDaySummary struct {
	BusinessDate             bizdate.Date `json:"businessDate"`
	Count                    int64        `json:"count"`
	AmountMinor              int64        `json:"amountMinor"`
	GrossMinor               int64        `json:"grossMinor"`
	NetMinor                 int64        `json:"netMinor"`
	VatMinor                 int64        `json:"vatMinor"`
	NonSaleReturnAmountMinor int64        `json:"nonSaleReturnAmountMinor"`
}

// Summary calculates the accounting summary of a period.
func (s *Service) Summary(ctx context.Context, t Tenant, p PeriodQuery) (Summary, error) {
	var (
		days    []DayTotals
		refunds []RefundTotals
	)
	err := s.Repo.Snapshot(ctx, func(r Reader) error {
		var err error
		if days, err = r.DayTotals(ctx, t.ID, p.Start, p.End); err != nil {
			return err
		}
		refunds, err = r.RefundTotals(ctx, t.ID, p.Start, p.End)
		return err
	})
	if err != nil {
		return Summary{}, err
	}
	out := Summary{RestaurantID: t.ID, Scope: p.Scope, Currency: t.Currency,
		Period:              Period{p.Start, p.End, t.TimeZone, t.DayStartHour},
		VatEvidenceComplete: true, RawSourceBasis: RawSourceBasis, CalculationVersion: CalculationVersion}
	var all Amounts
	for _, d := range days {
		if d.UnknownVat > 0 {
			out.VatEvidenceComplete = false
		}
		for _, m := range d.Methods {
			all.Add(m.Amounts, 1)
			out.DiscountsMinor += m.Discount
			out.TipsMinor += m.Tip
		}
	}
	out.Sales = SalesSummary{TransactionCount: all.Count, GrossMinor: all.Gross, VatMinor: all.Vat, NetMinor: all.Gross - all.Vat}
	g, v := all.GrossByRate, all.VatByRate
	for _, r := range []struct {
		cat        string
		gross, vat int64
	}{{"zero", g.Zero, v.Zero}, {"special", g.Special, v.Special}, {"reduced", g.Reduced, v.Reduced}, {"standard", g.Standard, v.Standard}, {"unknown", g.Unknown, v.Unknown}} {
		out.Sales.ByRate = append(out.Sales.ByRate, RateRow{Category: r.cat, GrossMinor: r.gross, VatMinor: r.vat, NetMinor: r.gross - r.vat})
	}
	rs := RefundSummary{Policy: RefundPolicy, Days: []RefundDaySummary{}}
	for _, r := range refunds {
		if len(rs.Days) == 0 || rs.Days[len(rs.Days)-1].BusinessDate != r.Date {
			rs.Days = append(rs.Days, RefundDaySummary{BusinessDate: r.Date})
		}
		day := &rs.Days[len(rs.Days)-1]
		if r.Kind == "refund" {
			rs.Count += r.Count
			rs.AmountMinor += r.Amount
			rs.GrossMinor += r.ImpactGross
			rs.NetMinor += r.ImpactNet
			rs.VatMinor += r.ImpactVat
			rs.UnknownImpactCount += r.UnknownImpact
			day.Count += r.Count
			day.AmountMinor += r.Amount
			day.GrossMinor += r.ImpactGross
			day.NetMinor += r.ImpactNet
			day.VatMinor += r.ImpactVat
		} else {
			rs.NonSaleReturnCount += r.Count
			rs.NonSaleReturnAmountMinor += r.Amount
			day.NonSaleReturnAmountMinor += r.Amount
		}
	}
	flags, err := s.Repo.RefundFlags(ctx, t.ID, p.Start, p.End)
	if err != nil {
		return Summary{}, err
	}
	out.Refunds = rs
	out.RefundReporting = RefundReporting{Policy: RefundPolicy, LegacyTiming: flags.Legacy, IncompleteEvidence: flags.Incomplete}
	return out, nil
}
