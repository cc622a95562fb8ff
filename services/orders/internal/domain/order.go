// Package domain holds the orders service's words: an order in its latest
// state as the till reported it, the search filters partners may use and
// their rules, and the repository the store implements.
package domain

import (
	"context"
	"fmt"
	"time"

	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/pkg/fault"
	"partnerapi.dev/services/contracts"
)

// Order statuses.
const (
	StatusPaid              = "paid"
	StatusPartiallyRefunded = "partially_refunded"
	StatusRefunded          = "refunded"
	StatusVoided            = "voided"
)

// MethodManual is the payment method of a settlement recorded by hand.
const MethodManual = "manual"

// PaymentMethods are the settlement method keys (accounting's keys).
var PaymentMethods = []string{"card", "cash", "online", MethodManual, "wolt", "foodora", "uber_eats"}

// Marketplaces are the marketplace method keys: a manually recorded
// settlement of a marketplace order settles through the marketplace.
var Marketplaces = []string{"wolt", "foodora", "uber_eats"}

// The parts of an order are the ingestion record's (package contracts), so
// what the POS side sends is what is stored and served.
type (
	Origin           = contracts.OrderOrigin
	VatRate          = contracts.LineVatRate
	SelectedOption   = contracts.SelectedOption
	Line             = contracts.OrderLine
	VatRow           = contracts.OrderVatRow
	RefundedItem     = contracts.RefundedItem
	PaymentReference = contracts.PaymentReference
)

// Order is an order in its latest reported state.
type Order struct {
	RestaurantID          string
	OrderID               string
	RestaurantOrderNumber int64
	ReceiptHash           string
	OccurredAt            time.Time
	BusinessDate          bizdate.Date
	LocalMinute           int
	OrderType             string
	TableNumber           *int
	Status                string
	RecordedPaymentMethod string
	PaymentMethod         string // effective settlement method
	Origin                Origin
	OriginalAmountMinor   int64
	TotalAmountMinor      int64
	VatMinor              int64
	RefundAmountMinor     int64
	DiscountAmountMinor   int64
	GrossSalesMinor       int64
	NetSalesMinor         int64
	TipAmountMinor        int64
	Currency              string
	VatAllocationMethod   string
	TaxCountryCode        string
	TaxRatesAsOf          bizdate.Date

	// Counts of all children, even when fewer were read.
	LineCount             int
	RefundedItemCount     int
	PaymentReferenceCount int

	Lines             []Line
	VatRows           []VatRow
	RefundedItems     []RefundedItem
	PaymentReferences []PaymentReference
	// PaymentReferencesUnavailable is set when they could not be read.
	PaymentReferencesUnavailable bool
}

// EffectivePaymentMethod is the method an order settles through: a manual
// settlement of a marketplace order reports the marketplace.
func EffectivePaymentMethod(recorded string, origin Origin) string {
	if recorded == MethodManual && origin.Provider != nil {
		for _, m := range Marketplaces {
			if *origin.Provider == m {
				return m
			}
		}
	}
	return recorded
}

// LocalMinute is the minute of the local day t falls on in loc.
func LocalMinute(t time.Time, loc *time.Location) int {
	l := t.In(loc)
	return l.Hour()*60 + l.Minute()
}

// Errors the API maps to answers.
var (
	// ErrNotFound: unknown order, or one of another restaurant.
	ErrNotFound = fault.New(fault.NotFound, "order not found")
)

// InvalidError is a request or record the caller must change; Field names
// the query parameter or record field.
type InvalidError struct {
	Field   string
	Message string
}

func (e *InvalidError) Error() string { return e.Message }

// Kind makes an InvalidError a 400 carrying its message.
func (e *InvalidError) Kind() fault.Kind { return fault.Invalid }

// Invalid builds an InvalidError.
func Invalid(field, format string, args ...any) *InvalidError {
	return &InvalidError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Limits of what one read returns.
const (
	SearchLineCap         = 20
	DetailLineCap         = 100
	RefundedItemCap       = 50
	PaymentReferenceCap   = 20
	DefaultSearchLimit    = 10
	MaxSearchLimit        = 20
	MaxDateRangeDays      = 31
	MaxOrderIDLength      = 255
	MaxReceiptRefLength   = 255
	MaxItemNameLength     = 100
	MaxOrdersPerIngestion = 5000
)

// Position is a keyset position in newest-first order.
type Position struct {
	OccurredAt time.Time
	OrderID    string
}

// Filter is a validated order search.
type Filter struct {
	RestaurantID          string
	OrderID               *string
	ReceiptReference      *string
	RestaurantOrderNumber *int64
	ItemName              *string
	PaymentMethod         *string
	Status                *string
	MinTotalMinor         *int64
	MaxTotalMinor         *int64
	StartMinute           *int // local minute, inclusive
	EndMinute             *int // local minute, inclusive
	// StartDate/EndDate are business dates; From/Until the instants they span
	// in the restaurant's time zone (Until exclusive).
	StartDate, EndDate *bizdate.Date
	From, Until        time.Time
	After              *Position
	Limit              int
}

// Page is one page of search results.
type Page struct {
	Orders []Order
	// Next is the position after the last order when more follow.
	Next *Position
}

// Repository stores orders.
type Repository interface {
	// Replace stores each order in its latest state, replacing earlier
	// states of the same (restaurant, order id), all or nothing, and records
	// the event decide gives each order it changed (none when nil) in the
	// same transaction.
	Replace(ctx context.Context, orders []Order, decide Decide) error
	// Search returns up to f.Limit orders, newest first, with at most
	// SearchLineCap lines each.
	Search(ctx context.Context, f Filter) (Page, error)
	// Get returns one order with capped children, or ErrNotFound.
	Get(ctx context.Context, restaurantID, orderID string) (Order, error)
}
