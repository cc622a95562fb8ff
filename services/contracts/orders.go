package contracts

import (
	"time"

	"partnerapi.dev/pkg/bizdate"
)

// OrdersIngestPath is the orders service's internal ingestion endpoint: an
// NDJSON body of OrderRecord lines, behind the ingestion token. The
// `orders import` command reads the same lines.
const OrdersIngestPath = "/internal/v1/orders/ingest"

// OrderRecord is one ingestion line: an order in its latest state, with the
// restaurant settings needed to date it. docs/orders.md gives every field's
// rules; the orders service refuses a line that breaks one.
type OrderRecord struct {
	RestaurantID          string             `json:"restaurantId"`
	TimeZone              string             `json:"timeZone"`
	DayStartHour          *int               `json:"dayStartHour"`
	Currency              string             `json:"currency"`
	Country               string             `json:"country"`
	OrderID               string             `json:"orderId"`
	RestaurantOrderNumber int64              `json:"restaurantOrderNumber"`
	ReceiptHash           string             `json:"receiptHash"`
	OccurredAt            *time.Time         `json:"occurredAt"`
	OrderType             string             `json:"orderType"`
	TableNumber           *int               `json:"tableNumber"`
	Status                string             `json:"status"`
	PaymentMethod         string             `json:"paymentMethod"`
	OrderOrigin           *OrderOrigin       `json:"orderOrigin"`
	OriginalAmountMinor   int64              `json:"originalAmountMinor"`
	TotalAmountMinor      int64              `json:"totalAmountMinor"`
	VatMinor              int64              `json:"vatMinor"`
	RefundAmountMinor     int64              `json:"refundAmountMinor"`
	DiscountAmountMinor   int64              `json:"discountAmountMinor"`
	GrossSalesMinor       int64              `json:"grossSalesMinor"`
	NetSalesMinor         int64              `json:"netSalesMinor"`
	TipAmountMinor        int64              `json:"tipAmountMinor"`
	VatAllocationMethod   string             `json:"vatAllocationMethod"`
	TaxCountryCode        string             `json:"taxCountryCode"`
	TaxRatesAsOf          *bizdate.Date      `json:"taxRatesAsOf"`
	Lines                 []OrderLine        `json:"lines"`
	VatRows               []OrderVatRow      `json:"vatRows"`
	RefundedItems         []RefundedItem     `json:"refundedItems"`
	PaymentReferences     []PaymentReference `json:"paymentReferences"`
}

// OrderOrigin tells where an order came from: kind pos, online or
// marketplace, with the marketplace as provider.
type OrderOrigin struct {
	Kind     string  `json:"kind"`
	Provider *string `json:"provider"`
}

// OrderLine is one order line.
type OrderLine struct {
	LineID                 string           `json:"lineId"`
	CatalogItemID          *string          `json:"catalogItemId"`
	CatalogItemKind        *string          `json:"catalogItemKind"`
	CatalogCategoryID      *string          `json:"catalogCategoryId"`
	MenuID                 *string          `json:"menuId"`
	Name                   string           `json:"name"`
	Category               *string          `json:"category"`
	ItemType               *string          `json:"itemType"`
	Quantity               int              `json:"quantity"`
	UnitPriceMinor         int64            `json:"unitPriceMinor"`
	OriginalUnitPriceMinor *int64           `json:"originalUnitPriceMinor"`
	GrossAmountMinor       int64            `json:"grossAmountMinor"`
	DiscountAmountMinor    int64            `json:"discountAmountMinor"`
	VatAmountMinor         int64            `json:"vatAmountMinor"`
	TaxEvidence            string           `json:"taxEvidence"`
	TaxCountryCode         *string          `json:"taxCountryCode"`
	TaxRatesAsOf           *bizdate.Date    `json:"taxRatesAsOf"`
	VatRates               []LineVatRate    `json:"vatRates"`
	SelectedOptions        []SelectedOption `json:"selectedOptions"`
}

// LineVatRate is one rate's share of a line's VAT.
type LineVatRate struct {
	Category       string `json:"category"`
	RateBps        int    `json:"rateBps"`
	VatAmountMinor int64  `json:"vatAmountMinor"`
}

// SelectedOption is an option chosen on a line.
type SelectedOption struct {
	OptionID         *string `json:"optionId"`
	OptionGroupID    *string `json:"optionGroupId"`
	Name             string  `json:"name"`
	Quantity         int     `json:"quantity"`
	UnitPriceMinor   int64   `json:"unitPriceMinor"`
	GrossAmountMinor int64   `json:"grossAmountMinor"`
	VatAmountMinor   int64   `json:"vatAmountMinor"`
}

// OrderVatRow is the order's VAT for one rate category, as sold.
type OrderVatRow struct {
	Category         string `json:"category"`
	RateBps          int    `json:"rateBps"`
	GrossAmountMinor int64  `json:"grossAmountMinor"`
	NetAmountMinor   int64  `json:"netAmountMinor"`
	VatAmountMinor   int64  `json:"vatAmountMinor"`
}

// RefundedItem is a returned quantity of one line.
type RefundedItem struct {
	LineID        *string   `json:"lineId"`
	CatalogItemID *string   `json:"catalogItemId"`
	Name          string    `json:"name"`
	Quantity      int       `json:"quantity"`
	AmountMinor   int64     `json:"amountMinor"`
	RefundedAt    time.Time `json:"refundedAt"`
}

// PaymentReference is payment tracking evidence for an order: never card
// data or provider credentials.
type PaymentReference struct {
	Provider            string    `json:"provider"`
	ReceiptHash         *string   `json:"receiptHash"`
	CheckoutID          *string   `json:"checkoutId"`
	TransactionID       *string   `json:"transactionId"`
	TransactionCode     *string   `json:"transactionCode"`
	SessionID           *string   `json:"sessionId"`
	RecordedAmountMinor int64     `json:"recordedAmountMinor"`
	Currency            string    `json:"currency"`
	CreatedAt           time.Time `json:"createdAt"`
}
