package domain

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"partnerapi.dev/pkg/bizdate"
)

// Record is one NDJSON ingestion line: an order in its latest state with the
// restaurant settings needed to date it. docs/orders.md documents it.
type Record struct {
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
	OrderOrigin           *Origin            `json:"orderOrigin"`
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
	Lines                 []Line             `json:"lines"`
	VatRows               []VatRow           `json:"vatRows"`
	RefundedItems         []RefundedItem     `json:"refundedItems"`
	PaymentReferences     []PaymentReference `json:"paymentReferences"`
}

// isUUID: 8-4-4-4-12 hex digits, either case.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// isUpperCode: exactly n letters A-Z (currency EUR, country FI).
func isUpperCode(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := range len(s) {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// isKey: a lower-case key such as dine_in: [a-z][a-z0-9_]{0,63}.
func isKey(s string) bool {
	if len(s) < 1 || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// ParseRecords reads an NDJSON stream of records, calling fn with each order
// (blank lines are skipped). An invalid line stops the read with an
// *InvalidError whose Field is "line N: field".
func ParseRecords(r io.Reader, fn func(line int, o Order) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	locs := map[string]*time.Location{}
	for n := 1; ; n++ {
		raw, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(raw)) > 0 {
			o, perr := ParseRecord(raw, locs)
			if perr != nil {
				var inv *InvalidError
				if errors.As(perr, &inv) {
					return &InvalidError{Field: fmt.Sprintf("line %d: %s", n, inv.Field), Message: fmt.Sprintf("line %d: %s", n, inv.Message)}
				}
				return perr
			}
			if ferr := fn(n, o); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// ParseRecord decodes and validates one record. locs caches loaded time zones.
func ParseRecord(raw []byte, locs map[string]*time.Location) (Order, error) {
	return parseRecord(string(raw), locs, &fastDecoder{})
}

// parseRecord is ParseRecord with a decoder to reuse; the order's strings
// may share line's memory.
func parseRecord(line string, locs map[string]*time.Location, d *fastDecoder) (Order, error) {
	var rec Record
	if !d.decode(line, &rec) {
		rec = Record{}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			return Order{}, describeJSON(err)
		}
	}
	return rec.Order(locs)
}

func describeJSON(err error) *InvalidError {
	var syntax *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return Invalid("json", "not valid JSON (at byte %d)", syntax.Offset)
	case errors.As(err, &typeErr):
		return Invalid(typeErr.Field, "field %q has the wrong type (%s)", typeErr.Field, typeErr.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return Invalid(f, "field %q is not part of the record format", f)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return Invalid("json", "the JSON ends early")
	}
	// time and date parse errors
	return Invalid("json", "a value is malformed: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// Order validates the record and computes what the service derives at
// ingestion: business date, local minute, effective payment method.
func (r Record) Order(locs map[string]*time.Location) (Order, error) {
	if !isUUID(r.RestaurantID) {
		return Order{}, Invalid("restaurantId", "restaurantId must be a UUID")
	}
	loc, ok := locs[r.TimeZone]
	if !ok {
		var err error
		if r.TimeZone == "" {
			return Order{}, Invalid("timeZone", "timeZone is required (an IANA time-zone name)")
		}
		if loc, err = time.LoadLocation(r.TimeZone); err != nil {
			return Order{}, Invalid("timeZone", "timeZone %q is not a known IANA time-zone name", r.TimeZone)
		}
		if locs != nil {
			locs[r.TimeZone] = loc
		}
	}
	if r.DayStartHour == nil || *r.DayStartHour < 0 || *r.DayStartHour > 23 {
		return Order{}, Invalid("dayStartHour", "dayStartHour is required, 0 to 23")
	}
	if !isUpperCode(r.Currency, 3) {
		return Order{}, Invalid("currency", "currency must be a three-letter upper-case code")
	}
	if !isUpperCode(r.Country, 2) {
		return Order{}, Invalid("country", "country must be a two-letter upper-case code")
	}
	if n := utf8.RuneCountInString(r.OrderID); n < 1 || n > MaxOrderIDLength {
		return Order{}, Invalid("orderId", "orderId must be 1 to 255 characters")
	}
	if r.RestaurantOrderNumber < 1 {
		return Order{}, Invalid("restaurantOrderNumber", "restaurantOrderNumber must be 1 or more")
	}
	if r.ReceiptHash == "" || len(r.ReceiptHash) > 255 {
		return Order{}, Invalid("receiptHash", "receiptHash must be 1 to 255 characters")
	}
	if r.OccurredAt == nil {
		return Order{}, Invalid("occurredAt", "occurredAt is required (RFC 3339 timestamp)")
	}
	if !isKey(r.OrderType) {
		return Order{}, Invalid("orderType", "orderType is required, e.g. dine_in or takeaway")
	}
	if r.TableNumber != nil && *r.TableNumber < 0 {
		return Order{}, Invalid("tableNumber", "tableNumber must be 0 or more, or null")
	}
	if !slices.Contains([]string{StatusPaid, StatusPartiallyRefunded, StatusRefunded, StatusVoided}, r.Status) {
		return Order{}, Invalid("status", "status must be paid, partially_refunded, refunded or voided")
	}
	if !slices.Contains(PaymentMethods, r.PaymentMethod) {
		return Order{}, Invalid("paymentMethod", "paymentMethod must be one of %s", strings.Join(PaymentMethods, ", "))
	}
	if r.OrderOrigin == nil || !isKey(r.OrderOrigin.Kind) {
		return Order{}, Invalid("orderOrigin", "orderOrigin.kind is required")
	}
	for _, a := range [...]struct {
		name string
		v    int64
	}{
		{"originalAmountMinor", r.OriginalAmountMinor}, {"totalAmountMinor", r.TotalAmountMinor}, {"vatMinor", r.VatMinor},
		{"refundAmountMinor", r.RefundAmountMinor}, {"discountAmountMinor", r.DiscountAmountMinor},
		{"grossSalesMinor", r.GrossSalesMinor}, {"tipAmountMinor", r.TipAmountMinor},
	} {
		if a.v < 0 {
			return Order{}, Invalid(a.name, "%s must be 0 or more", a.name)
		}
	}
	if r.VatAllocationMethod == "" {
		r.VatAllocationMethod = "stored"
	}
	if !isUpperCode(r.TaxCountryCode, 2) {
		return Order{}, Invalid("taxCountryCode", "taxCountryCode must be a two-letter upper-case code")
	}
	if r.TaxRatesAsOf == nil {
		return Order{}, Invalid("taxRatesAsOf", "taxRatesAsOf is required (YYYY-MM-DD)")
	}
	for i, l := range r.Lines {
		f := func() string { return fmt.Sprintf("lines[%d]", i) } // only for the error
		switch {
		case l.LineID == "" || len(l.LineID) > 255:
			return Order{}, Invalid(f()+".lineId", "%s.lineId must be 1 to 255 characters", f())
		case l.Name == "" || len(l.Name) > 500:
			return Order{}, Invalid(f()+".name", "%s.name must be 1 to 500 characters", f())
		case l.TaxEvidence == "":
			return Order{}, Invalid(f()+".taxEvidence", "%s.taxEvidence is required (snapshot, legacy or unknown)", f())
		}
		if l.VatRates == nil {
			r.Lines[i].VatRates = []VatRate{}
		}
		if l.SelectedOptions == nil {
			r.Lines[i].SelectedOptions = []SelectedOption{}
		}
		for j, opt := range l.SelectedOptions {
			if opt.Name == "" {
				return Order{}, Invalid(fmt.Sprintf("%s.selectedOptions[%d].name", f(), j), "%s.selectedOptions[%d].name is required", f(), j)
			}
		}
	}
	for i, v := range r.VatRows {
		if v.Category == "" {
			return Order{}, Invalid(fmt.Sprintf("vatRows[%d].category", i), "vatRows[%d].category is required", i)
		}
	}
	for i, ri := range r.RefundedItems {
		if ri.Name == "" || ri.RefundedAt.IsZero() {
			return Order{}, Invalid(fmt.Sprintf("refundedItems[%d]", i), "refundedItems[%d] needs name and refundedAt", i)
		}
	}
	for i, p := range r.PaymentReferences {
		if p.Provider == "" || !isUpperCode(p.Currency, 3) || p.CreatedAt.IsZero() {
			return Order{}, Invalid(fmt.Sprintf("paymentReferences[%d]", i), "paymentReferences[%d] needs provider, currency and createdAt", i)
		}
	}

	at := r.OccurredAt.UTC().Truncate(time.Microsecond)
	o := Order{
		RestaurantID:          strings.ToLower(r.RestaurantID),
		OrderID:               r.OrderID,
		RestaurantOrderNumber: r.RestaurantOrderNumber,
		ReceiptHash:           r.ReceiptHash,
		OccurredAt:            at,
		BusinessDate:          bizdate.Of(at, loc, *r.DayStartHour),
		LocalMinute:           LocalMinute(at, loc),
		OrderType:             r.OrderType,
		TableNumber:           r.TableNumber,
		Status:                r.Status,
		RecordedPaymentMethod: r.PaymentMethod,
		PaymentMethod:         EffectivePaymentMethod(r.PaymentMethod, *r.OrderOrigin),
		Origin:                *r.OrderOrigin,
		OriginalAmountMinor:   r.OriginalAmountMinor,
		TotalAmountMinor:      r.TotalAmountMinor,
		VatMinor:              r.VatMinor,
		RefundAmountMinor:     r.RefundAmountMinor,
		DiscountAmountMinor:   r.DiscountAmountMinor,
		GrossSalesMinor:       r.GrossSalesMinor,
		NetSalesMinor:         r.NetSalesMinor,
		TipAmountMinor:        r.TipAmountMinor,
		Currency:              r.Currency,
		VatAllocationMethod:   r.VatAllocationMethod,
		TaxCountryCode:        r.TaxCountryCode,
		TaxRatesAsOf:          *r.TaxRatesAsOf,
		LineCount:             len(r.Lines),
		RefundedItemCount:     len(r.RefundedItems),
		PaymentReferenceCount: len(r.PaymentReferences),
		Lines:                 r.Lines,
		VatRows:               r.VatRows,
		RefundedItems:         r.RefundedItems,
		PaymentReferences:     r.PaymentReferences,
	}
	return o, nil
}

// ItemNames is the lower-cased line names the item_name filter searches.
func (o Order) ItemNames() string {
	var b strings.Builder
	for i, l := range o.Lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strings.ToLower(l.Name))
	}
	return b.String()
}
