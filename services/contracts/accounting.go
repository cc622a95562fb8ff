package contracts

import (
	"time"

	"partnerapi.dev/pkg/bizdate"
)

// AccountingIngestPath is the accounting service's internal ingestion
// endpoint: an NDJSON body of AccountingRecord lines, behind the ingestion
// token. The `accounting import` command reads the same lines.
const AccountingIngestPath = "/internal/v1/accounting/ingest"

// Record types of an accounting ingestion line.
const (
	AccountingRecordPaymentSource = "payment_source"
	AccountingRecordRefundEvent   = "refund_event"
)

// Source kinds of a payment source.
const (
	SourceKindOrder    = "order"     // one order paid on its own
	SourceKindTab      = "tab"       // one payment settling several orders of a table
	SourceKindTabSplit = "tab-split" // one share of a tab split between payers
)

// Refund event kinds.
const (
	RefundKindRefund        = "refund"                 // money returned for a sale: a negative sale with VAT
	RefundKindPendingReturn = "pending_payment_return" // a payment returned before it completed: no sale, no VAT
	RefundKindExtraCapture  = "extra_capture_return"   // money captured beyond the sale returned: no sale, no VAT
)

// VAT evidence of a payment source.
const (
	VatEvidenceKnown   = "known"   // the VAT by rate comes from the sale's tax snapshot
	VatEvidenceUnknown = "unknown" // the VAT cannot be traced to rates: the day needs review
)

// AccountingRecord is one ingestion line: exactly one of PaymentSource and
// RefundEvent, named by Type, with the restaurant settings needed to date it.
type AccountingRecord struct {
	Type          string               `json:"type"`
	RestaurantID  string               `json:"restaurantId"`
	TimeZone      string               `json:"timeZone"`
	DayStartHour  *int                 `json:"dayStartHour"`
	Currency      string               `json:"currency"`
	PaymentSource *PaymentSourceRecord `json:"paymentSource,omitempty"`
	RefundEvent   *RefundEventRecord   `json:"refundEvent,omitempty"`
}

// RateAmounts splits an amount by VAT rate category. A known-evidence
// source has Unknown 0; the categories sum to the amount exactly.
type RateAmounts struct {
	Zero     int64 `json:"zero"`
	Special  int64 `json:"special"`
	Reduced  int64 `json:"reduced"`
	Standard int64 `json:"standard"`
	Unknown  int64 `json:"unknown"`
}

// Sum is the total over the categories.
func (r RateAmounts) Sum() int64 { return r.Zero + r.Special + r.Reduced + r.Standard + r.Unknown }

// PaymentSourceRecord is one exact payment: an order paid on its own, a tab
// payment settling several orders, or one share of a split tab (shares of
// one tab carry the same SourceGroupID). Identity is (restaurant, kind,
// record id); sending it again with other content replaces it.
type PaymentSourceRecord struct {
	SourceKind        string     `json:"sourceKind"`
	SourceRecordID    string     `json:"sourceRecordId"`
	ReceiptHash       string     `json:"receiptHash"`
	ParentReceiptHash *string    `json:"parentReceiptHash"`
	ComponentID       *string    `json:"componentId"`
	TabSplitID        *string    `json:"tabSplitId"`
	SourceGroupID     *string    `json:"sourceGroupId"`
	OrderIDs          []string   `json:"orderIds"`
	OccurredAt        *time.Time `json:"occurredAt"`
	MethodKey         string     `json:"methodKey"`
	GrossMinor        int64      `json:"grossMinor"`
	VatMinor          int64      `json:"vatMinor"`
	// TransactionCount is the payment transactions this source stands for
	// (1 for one payment).
	TransactionCount int         `json:"transactionCount"`
	VatEvidence      string      `json:"vatEvidence"`
	GrossByRateMinor RateAmounts `json:"grossByRateMinor"`
	VatByRateMinor   RateAmounts `json:"vatByRateMinor"`
	// DiscountMinor and TipMinor are the discounts given on the sales this
	// payment settles and the tips paid with it (the accounting summary's
	// figures); neither is part of GrossMinor, which is the sales amount.
	DiscountMinor int64 `json:"discountMinor"`
	TipMinor      int64 `json:"tipMinor"`
}

// RefundEventRecord is one refund event with its own increment. RefundID is
// stable: sending it again with other content replaces it.
type RefundEventRecord struct {
	RefundID             string            `json:"refundId"`
	Kind                 string            `json:"kind"`
	OccurredAt           *time.Time        `json:"occurredAt"`
	OrderID              *string           `json:"orderId"`
	OriginalBusinessDate *bizdate.Date     `json:"originalBusinessDate"`
	MethodKey            string            `json:"methodKey"`
	AmountMinor          int64             `json:"amountMinor"`
	ReturnedLines        []ReturnedLine    `json:"returnedLines"`
	AccountingImpact     *AccountingImpact `json:"accountingImpact"`
	// LegacyTiming marks an event whose refund time was recorded by the old
	// POS flow (the time it was booked, not the time money moved).
	LegacyTiming bool `json:"legacyTiming"`
}

// ReturnedLine is a frozen quantity delta of one returned order line.
type ReturnedLine struct {
	LineID        string  `json:"lineId"`
	CatalogItemID *string `json:"catalogItemId"`
	Name          string  `json:"name"`
	QuantityDelta float64 `json:"quantityDelta"`
}

// AccountingImpact is a refund's signed effect on sales (negative for a
// refund): gross = net + VAT, VAT split by rate.
type AccountingImpact struct {
	GrossMinor     int64       `json:"grossMinor"`
	NetMinor       int64       `json:"netMinor"`
	VatMinor       int64       `json:"vatMinor"`
	VatByRateMinor RateAmounts `json:"vatByRateMinor"`
}
