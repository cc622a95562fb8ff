package domain

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"time"

	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/pkg/jsontext"
	"partnerapi.dev/services/contracts"
)

// Record is one NDJSON ingestion line (contracts.OrderRecord), with the
// rules and conversion of this service.
type Record contracts.OrderRecord

// IsUUID reports whether s is a UUID: 8-4-4-4-12 hex digits, either case.
func IsUUID(s string) bool {
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
// *InvalidError whose Field is "line N: path" and whose Message is
// "line N: path: rule".
func ParseRecords(r io.Reader, fn func(line int, o Order) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	locs := map[string]*time.Location{}
	for n := 1; ; n++ {
		raw, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(raw)) > 0 {
			o, perr := ParseRecord(raw, locs)
			if perr != nil {
				return onLine(n, perr)
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

// onLine prefixes a record's validation error with its line number.
func onLine(n int, err error) error {
	var inv *InvalidError
	if !errors.As(err, &inv) {
		return err
	}
	field := fmt.Sprintf("line %d", n)
	if inv.Field != "" {
		field += ": " + inv.Field
	}
	return &InvalidError{Field: field, Message: fmt.Sprintf("line %d: %s", n, inv.Message)}
}

// ParseRecord decodes and validates one record. locs caches loaded time zones.
// The HTTP ingestion and the import both read records through it.
func ParseRecord(raw []byte, locs map[string]*time.Location) (Order, error) {
	return parseRecord(string(raw), locs, &fastDecoder{})
}

// parseRecord is ParseRecord with a decoder to reuse; the order's strings
// may share line's memory.
func parseRecord(line string, locs map[string]*time.Location, d *fastDecoder) (Order, error) {
	var rec Record
	if !d.decode(line, &rec) {
		var err error
		if rec, err = decodeRecord(line); err != nil {
			return Order{}, err
		}
	}
	return rec.Order(locs)
}

// decodeRecord decodes a line with encoding/json: exactly one JSON object
// (only white space after it), no unknown field. encoding/json would turn
// invalid UTF-8 and unpaired surrogate escapes into U+FFFD; they are
// decoded as NUL instead, so the text rules refuse them naming the field.
func decodeRecord(line string) (Record, error) {
	marked, firstBad := jsontext.MarkInvalid(line)
	var rec Record
	dec := json.NewDecoder(strings.NewReader(marked))
	dec.DisallowUnknownFields()
	err := dec.Decode(&rec)
	if err == nil {
		if rest := marked[dec.InputOffset():]; strings.Trim(rest, " \t\r\n") != "" {
			if firstBad >= 0 {
				return Record{}, Invalid("", "not valid UTF-8 text (at byte %d)", firstBad)
			}
			at := int(dec.InputOffset()) + len(rest) - len(strings.TrimLeft(rest, " \t\r\n"))
			return Record{}, Invalid("", "unexpected data after the JSON object (at byte %d); send one object per line", at)
		}
		return rec, nil
	}
	if firstBad >= 0 {
		return Record{}, Invalid("", "not valid UTF-8 text (at byte %d)", firstBad)
	}
	return Record{}, describeJSON(err)
}

func describeJSON(err error) *InvalidError {
	var syntax *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return Invalid("", "not valid JSON (at byte %d)", syntax.Offset)
	case errors.As(err, &typeErr) && strings.HasPrefix(typeErr.Value, "number") && typeErr.Type.Kind() >= reflect.Int && typeErr.Type.Kind() <= reflect.Int64:
		return Invalid(typeErr.Field, "%s: must be an integer from %d to %d", typeErr.Field, math.MinInt64, math.MaxInt64)
	case errors.As(err, &typeErr):
		return Invalid(typeErr.Field, "%s: has the wrong type (%s)", typeErr.Field, typeErr.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return Invalid(f, "%s: is not part of the record format", f)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return Invalid("", "the JSON ends early")
	}
	// time and date parse errors
	return Invalid("", "a value is malformed: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// Order validates the record and computes what the service derives at
// ingestion: business date, local minute, effective payment method.
func (r Record) Order(locs map[string]*time.Location) (Order, error) {
	if field, rule := r.problem(); rule != "" {
		return Order{}, Invalid(field, "%s: %s", field, rule)
	}
	loc, ok := locs[r.TimeZone]
	if !ok {
		var err error
		// "Local" would be the server's own zone.
		if loc, err = time.LoadLocation(r.TimeZone); err != nil || r.TimeZone == "Local" {
			return Order{}, Invalid("timeZone", "timeZone: %q is not a known IANA time-zone name", r.TimeZone)
		}
		if locs != nil {
			locs[r.TimeZone] = loc
		}
	}
	if r.VatAllocationMethod == "" {
		r.VatAllocationMethod = VatAllocationStored
	}
	for i := range r.Lines {
		if r.Lines[i].VatRates == nil {
			r.Lines[i].VatRates = []VatRate{}
		}
		if r.Lines[i].SelectedOptions == nil {
			r.Lines[i].SelectedOptions = []SelectedOption{}
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
