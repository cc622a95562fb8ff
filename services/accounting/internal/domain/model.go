// Package domain holds the accounting rules: what a payment source and a
// refund event are, how a payment report is calculated from daily totals and
// the correction ledger, when it is ready, and how a correction is previewed,
// applied and undone. It imports neither the HTTP framework nor the data
// layer; the store implements Repository.
package domain

import (
	"context"
	"time"

	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/services/contracts"
)

// RateAmounts is an amount split by VAT rate category.
type RateAmounts = contracts.RateAmounts

// Policy and labels of the report.
const (
	RefundPolicy       = "refund-event-date/v1"
	RawSourceBasis     = "services_accounting"
	CalculationVersion = "accounting-report/v1"
	PreviewLifetime    = 5 * time.Minute
	MaxWindowDays      = 31
	MaxWorkspace       = 500
)

// Methods are the supported payment methods, in report order.
var Methods = []Method{
	{"card", "Card"}, {"cash", "Cash"}, {"online", "Online"}, {"manual", "Manual"},
	{"wolt", "Wolt"}, {"foodora", "Foodora"}, {"uber_eats", "Uber Eats"},
}

// Method is a payment method key and its label.
type Method struct {
	Key   string `json:"key"`
	Label string `json:"label"`
}

// MethodLabel returns the label of a key (the key itself when unknown).
func MethodLabel(key string) string {
	for _, m := range Methods {
		if m.Key == key {
			return m.Label
		}
	}
	return key
}

// KnownMethod reports whether key is a supported method.
func KnownMethod(key string) bool {
	for _, m := range Methods {
		if m.Key == key {
			return true
		}
	}
	return false
}

func methodOrder(key string) int {
	for i, m := range Methods {
		if m.Key == key {
			return i
		}
	}
	return len(Methods)
}

// Tenant is the restaurant a request acts on.
type Tenant struct {
	ID           string
	Loc          *time.Location
	TimeZone     string
	DayStartHour int
	Currency     string
}

// Amounts is what a payment moves: gross, VAT (net is gross minus VAT),
// transaction count and the split by rate.
type Amounts struct {
	Gross, Vat  int64
	Count       int64
	GrossByRate RateAmounts
	VatByRate   RateAmounts
}

// Add adds o to a.
func (a *Amounts) Add(o Amounts, sign int64) {
	a.Gross += sign * o.Gross
	a.Vat += sign * o.Vat
	a.Count += sign * o.Count
	addRates(&a.GrossByRate, o.GrossByRate, sign)
	addRates(&a.VatByRate, o.VatByRate, sign)
}

func addRates(a *RateAmounts, o RateAmounts, sign int64) {
	a.Zero += sign * o.Zero
	a.Special += sign * o.Special
	a.Reduced += sign * o.Reduced
	a.Standard += sign * o.Standard
	a.Unknown += sign * o.Unknown
}

// Source is one exact payment record.
type Source struct {
	Kind, RecordID    string
	ReceiptHash       string
	ParentReceiptHash *string
	ComponentID       *string
	TabSplitID        *string
	GroupID           *string
	GroupGross        *int64
	OrderIDs          []string
	OccurredAt        time.Time
	BusinessDate      bizdate.Date
	Method            string
	Amounts           Amounts
	VatKnown          bool
	Discount, Tip     int64
	Fingerprint       string
}

// Key is the source's "<kind>:<record id>".
func (s Source) Key() string { return s.Kind + ":" + s.RecordID }

// MethodTotals is one method's sums over a day.
type MethodTotals struct {
	Method        string
	Amounts       Amounts
	Discount, Tip int64
}

// DayTotals is one business date's sums by method and its evidence state.
type DayTotals struct {
	Date        bizdate.Date
	Methods     []MethodTotals
	SourceCount int
	UnknownVat  int
	Fingerprint string
}

// Correction is one ledger row.
type Correction struct {
	ID, BatchID, RevisionID string
	RestaurantID            string
	Date                    bizdate.Date
	Action                  string // correct or undo
	SourceKind              string
	SourceRecordID          string
	From, To                string
	Moved                   Amounts
	SourceFingerprint       string
	Reason                  string
	Undoes                  *string
	CreatedAt               time.Time
}

// SourceKey is the corrected source's key.
func (c Correction) SourceKey() string { return c.SourceKind + ":" + c.SourceRecordID }

// RefundEvent is one stored refund event.
type RefundEvent struct {
	ID                   string
	Kind                 string
	OccurredAt           time.Time
	BusinessDate         bizdate.Date
	OrderID              *string
	OriginalBusinessDate *bizdate.Date
	Method               string
	Amount               int64
	ReturnedLines        []contracts.ReturnedLine
	Impact               *contracts.AccountingImpact
	LegacyTiming         bool
	Fingerprint          string
}

// RefundFlags describes the refund events of a period.
type RefundFlags struct {
	Legacy, Incomplete bool
}

// RefundTotals sums the refund events of a period (for the summary).
type RefundTotals struct {
	Date          bizdate.Date
	Kind          string
	Count         int64
	Amount        int64
	ImpactGross   int64
	ImpactNet     int64
	ImpactVat     int64
	UnknownImpact int64
}

// Batch is a validated ingestion batch.
type Batch struct {
	Sources []SourceWrite
	Refunds []RefundWrite
}

// SourceWrite is a source to store for a restaurant.
type SourceWrite struct {
	RestaurantID string
	Source       Source
}

// RefundWrite is a refund event to store for a restaurant.
type RefundWrite struct {
	RestaurantID string
	Event        RefundEvent
}

// Recorded is the event an ingestion records when it stores this refund
// event for the first time (an update of a stored one records none):
// refund_event.recorded with the refund as the API shows it.
func (w RefundWrite) Recorded() Event {
	return Event{Type: contracts.EventRefundRecorded, RestaurantID: w.RestaurantID, Data: ViewRefund(w.Event)}
}

// RefundPosition is the keyset position of a refund page.
type RefundPosition struct {
	Date       bizdate.Date
	OccurredAt time.Time
	ID         string
}

// RefundFilter selects a page of refund events.
type RefundFilter struct {
	RestaurantID string
	Start, End   bizdate.Date
	OrderID      *string
	After        *RefundPosition
	Limit        int
}

// Reader is what a report needs to read; the store answers it from the pool
// or inside a write's transaction.
type Reader interface {
	DayTotals(ctx context.Context, restaurant string, start, end bizdate.Date) ([]DayTotals, error)
	Ledger(ctx context.Context, restaurant string, start, end bizdate.Date) ([]Correction, error)
	SourcesByKey(ctx context.Context, restaurant string, keys []string) ([]Source, error)
	RefundFlags(ctx context.Context, restaurant string, start, end bizdate.Date) (RefundFlags, error)
	Source(ctx context.Context, restaurant, kind, recordID string) (Source, error)
	Revision(ctx context.Context, restaurant string, date bizdate.Date) (string, error)
	RefundTotals(ctx context.Context, restaurant string, start, end bizdate.Date) ([]RefundTotals, error)
}

// DayWriter is a Reader inside a transaction holding the day lock, which
// can append to the ledger.
type DayWriter interface {
	Reader
	// Append writes c to the ledger and moves the day's revision to
	// c.RevisionID.
	Append(ctx context.Context, c Correction) error
	// Record records e in the service's outbox, in the write's
	// transaction; called as the write's last step.
	Record(ctx context.Context, e Event) error
}

// Event is a change partners are told about (docs/events.md).
type Event struct {
	Type         string
	RestaurantID string
	Data         any
}

// CorrectionEvent is what payment_correction.applied and .undone carry:
// the write's result without the report.
type CorrectionEvent struct {
	RestaurantID   string       `json:"restaurantId"`
	BatchID        string       `json:"batchId"`
	RevisionID     string       `json:"revisionId"`
	BusinessDate   bizdate.Date `json:"businessDate"`
	SourceKind     string       `json:"sourceKind"`
	SourceRecordID string       `json:"sourceRecordId"`
}

// RefundEventView is a refund event as the refunds page shows it, and what
// refund_event.recorded carries.
type RefundEventView struct {
	RefundID             string                      `json:"refundId"`
	RefundBusinessDate   bizdate.Date                `json:"refundBusinessDate"`
	OccurredAt           time.Time                   `json:"occurredAt"`
	Kind                 string                      `json:"kind"`
	OrderID              *string                     `json:"orderId"`
	OriginalBusinessDate *bizdate.Date               `json:"originalBusinessDate"`
	MethodKey            string                      `json:"methodKey"`
	AmountMinor          int64                       `json:"amountMinor"`
	ReturnedLines        []contracts.ReturnedLine    `json:"returnedLines"`
	AccountingImpact     *contracts.AccountingImpact `json:"accountingImpact"`
}

// ViewRefund gives a refund event its wire shape.
func ViewRefund(e RefundEvent) RefundEventView {
	return RefundEventView{RefundID: e.ID, RefundBusinessDate: e.BusinessDate, OccurredAt: e.OccurredAt, Kind: e.Kind,
		OrderID: e.OrderID, OriginalBusinessDate: e.OriginalBusinessDate, MethodKey: e.Method, AmountMinor: e.Amount,
		ReturnedLines: e.ReturnedLines, AccountingImpact: e.Impact}
}

// WriteRequest identifies an idempotent write.
type WriteRequest struct {
	Scope, Key string
	Body       any
}

// WriteResult is the stored or fresh answer of a write.
type WriteResult struct {
	Data     []byte
	Replayed bool
}

// Repository is the store.
type Repository interface {
	Reader
	Ingest(ctx context.Context, b Batch) error
	Refunds(ctx context.Context, f RefundFilter) ([]RefundEvent, error)
	// Snapshot runs read against one consistent moment of the data, so an
	// answer built from several reads never mixes two states of a day.
	Snapshot(ctx context.Context, read func(Reader) error) error
	WorkspaceSources(ctx context.Context, restaurant string, start, end bizdate.Date, query string, limit int) ([]Source, error)
	// WriteDay runs write once per (scope, key) in one transaction that
	// holds the day lock of (restaurant, date), with the idempotency
	// record written in the same transaction.
	WriteDay(ctx context.Context, req WriteRequest, restaurant string, date bizdate.Date, write func(DayWriter) (any, error)) (WriteResult, error)
}
