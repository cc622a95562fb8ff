package api

import (
	"time"

	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/services/orders/internal/domain"
)

// timestamp formats instants as ISO 8601 UTC with milliseconds.
type timestamp time.Time

func (t timestamp) MarshalText() ([]byte, error) {
	return []byte(time.Time(t).UTC().Format("2006-01-02T15:04:05.000Z")), nil
}

type periodView struct {
	StartDate    bizdate.Date `json:"startDate"`
	EndDate      bizdate.Date `json:"endDate"`
	TimeZone     string       `json:"timeZone"`
	DayStartHour int          `json:"dayStartHour"`
}

type summaryView struct {
	OrderID               string        `json:"orderId"`
	ReceiptHash           string        `json:"receiptHash"`
	RestaurantOrderNumber int64         `json:"restaurantOrderNumber"`
	OccurredAt            timestamp     `json:"occurredAt"`
	BusinessDate          bizdate.Date  `json:"businessDate"`
	OrderType             string        `json:"orderType"`
	TableNumber           *int          `json:"tableNumber"`
	Status                string        `json:"status"`
	PaymentMethod         string        `json:"paymentMethod"`
	OrderOrigin           domain.Origin `json:"orderOrigin"`
	OriginalAmountMinor   int64         `json:"originalAmountMinor"`
	TotalAmountMinor      int64         `json:"totalAmountMinor"`
	VatMinor              int64         `json:"vatMinor"`
	RefundAmountMinor     int64         `json:"refundAmountMinor"`
	DiscountAmountMinor   int64         `json:"discountAmountMinor"`
	Items                 []lineView    `json:"items"`
	ItemsTruncated        bool          `json:"itemsTruncated"`
}

type lineView struct {
	domain.Line
}

func summary(o domain.Order) summaryView {
	items := make([]lineView, len(o.Lines))
	for i, l := range o.Lines {
		items[i] = lineView{l}
	}
	return summaryView{
		OrderID:               o.OrderID,
		ReceiptHash:           o.ReceiptHash,
		RestaurantOrderNumber: o.RestaurantOrderNumber,
		OccurredAt:            timestamp(o.OccurredAt),
		BusinessDate:          o.BusinessDate,
		OrderType:             o.OrderType,
		TableNumber:           o.TableNumber,
		Status:                o.Status,
		PaymentMethod:         o.PaymentMethod,
		OrderOrigin:           o.Origin,
		OriginalAmountMinor:   o.OriginalAmountMinor,
		TotalAmountMinor:      o.TotalAmountMinor,
		VatMinor:              o.VatMinor,
		RefundAmountMinor:     o.RefundAmountMinor,
		DiscountAmountMinor:   o.DiscountAmountMinor,
		Items:                 items,
		ItemsTruncated:        o.LineCount > len(o.Lines),
	}
}

type searchView struct {
	RestaurantID string        `json:"restaurantId"`
	SearchScope  string        `json:"searchScope"`
	Period       *periodView   `json:"period"`
	Currency     string        `json:"currency"`
	Matches      []summaryView `json:"matches"`
	Truncated    bool          `json:"truncated"`
	NextCursor   *string       `json:"nextCursor"`
}

type vatBreakdownView struct {
	CountryCode string          `json:"countryCode"`
	RatesAsOf   bizdate.Date    `json:"ratesAsOf"`
	Rows        []domain.VatRow `json:"rows"`
}

type refundedItemView struct {
	LineID        *string   `json:"lineId"`
	CatalogItemID *string   `json:"catalogItemId"`
	Name          string    `json:"name"`
	Quantity      int       `json:"quantity"`
	AmountMinor   int64     `json:"amountMinor"`
	RefundedAt    timestamp `json:"refundedAt"`
}

type paymentView struct {
	Provider            string    `json:"provider"`
	ReceiptHash         *string   `json:"receiptHash"`
	CheckoutID          *string   `json:"checkoutId"`
	TransactionID       *string   `json:"transactionId"`
	TransactionCode     *string   `json:"transactionCode"`
	SessionID           *string   `json:"sessionId"`
	RecordedAmountMinor int64     `json:"recordedAmountMinor"`
	Currency            string    `json:"currency"`
	CreatedAt           timestamp `json:"createdAt"`
	Evidence            string    `json:"evidence"`
}

type paymentReferencesView struct {
	Payments  []paymentView `json:"payments"`
	Truncated bool          `json:"truncated"`
}

type detailView struct {
	summaryView
	GrossSalesMinor        int64                  `json:"grossSalesMinor"`
	NetSalesMinor          int64                  `json:"netSalesMinor"`
	VatAllocationMethod    string                 `json:"vatAllocationMethod"`
	VatBreakdown           vatBreakdownView       `json:"vatBreakdown"`
	TipAmountMinor         int64                  `json:"tipAmountMinor"`
	RefundedItems          []refundedItemView     `json:"refundedItems"`
	RefundedItemsTruncated bool                   `json:"refundedItemsTruncated"`
	PaymentReferences      *paymentReferencesView `json:"paymentReferences"`
}

type detailsResponse struct {
	RestaurantID string     `json:"restaurantId"`
	Currency     string     `json:"currency"`
	Order        detailView `json:"order"`
}

func details(o domain.Order) detailView {
	d := detailView{
		summaryView:         summary(o),
		GrossSalesMinor:     o.GrossSalesMinor,
		NetSalesMinor:       o.NetSalesMinor,
		VatAllocationMethod: o.VatAllocationMethod,
		VatBreakdown: vatBreakdownView{
			CountryCode: o.TaxCountryCode,
			RatesAsOf:   o.TaxRatesAsOf,
			Rows:        o.VatRows,
		},
		TipAmountMinor:         o.TipAmountMinor,
		RefundedItems:          make([]refundedItemView, len(o.RefundedItems)),
		RefundedItemsTruncated: o.RefundedItemCount > len(o.RefundedItems),
	}
	if d.VatBreakdown.Rows == nil {
		d.VatBreakdown.Rows = []domain.VatRow{}
	}
	for i, r := range o.RefundedItems {
		d.RefundedItems[i] = refundedItemView{r.LineID, r.CatalogItemID, r.Name, r.Quantity, r.AmountMinor, timestamp(r.RefundedAt)}
	}
	if !o.PaymentReferencesUnavailable {
		refs := &paymentReferencesView{Payments: make([]paymentView, len(o.PaymentReferences)), Truncated: o.PaymentReferenceCount > len(o.PaymentReferences)}
		for i, p := range o.PaymentReferences {
			refs.Payments[i] = paymentView{p.Provider, p.ReceiptHash, p.CheckoutID, p.TransactionID, p.TransactionCode,
				p.SessionID, p.RecordedAmountMinor, p.Currency, timestamp(p.CreatedAt), "payment_tracking"}
		}
		d.PaymentReferences = refs
	}
	return d
}

// OrderEventData is what an order event carries: the order as search shows
// it (its first domain.SearchLineCap lines).
func OrderEventData(o domain.Order) any { return summary(o) }
