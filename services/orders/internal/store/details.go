package store

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/services/orders/internal/domain"
)

// An order's lines (with their options), VAT rows, refunded items and
// payment references are stored in order_details, one row per order beside
// its orders row, as JSON arrays: nothing searches them, and every read
// wants them whole with the order. One row instead of a row per line,
// option, VAT row, refund and reference makes a bulk load a few rows per
// order and a details read one lookup more than the order's.
//
// Each element is an array of the ingestion record's fields (package
// contracts) in their declared order, not an object: the field names were
// more than half of the bytes, and every byte is written, logged to the
// WAL, scanned by the primary key's build and copied by ANALYZE. The
// columns' comments give the positions.
//
// The arrays are written and read here, by hand, the same way on every
// path (the replacing upsert and the bulk load); migration 11 writes the
// same values from the objects migration 10 wrote.

// appendDetails writes an order's four arrays into bufs, in the order of
// detailColumns (after the key).
func appendDetails(bufs *[4][]byte, o domain.Order) {
	bufs[0] = appendLines(bufs[0][:0], o.Lines)
	bufs[1] = appendVatRows(bufs[1][:0], o.VatRows)
	bufs[2] = appendRefundedItems(bufs[2][:0], o.RefundedItems)
	bufs[3] = appendPaymentReferences(bufs[3][:0], o.PaymentReferences)
}

func appendLines(b []byte, lines []domain.Line) []byte {
	b = append(b, '[')
	for i, l := range lines {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(append(b, '['), l.LineID)
		b = appendStringPtr(append(b, ','), l.CatalogItemID)
		b = appendStringPtr(append(b, ','), l.CatalogItemKind)
		b = appendStringPtr(append(b, ','), l.CatalogCategoryID)
		b = appendStringPtr(append(b, ','), l.MenuID)
		b = appendString(append(b, ','), l.Name)
		b = appendStringPtr(append(b, ','), l.Category)
		b = appendStringPtr(append(b, ','), l.ItemType)
		b = strconv.AppendInt(append(b, ','), int64(l.Quantity), 10)
		b = strconv.AppendInt(append(b, ','), l.UnitPriceMinor, 10)
		b = appendInt64Ptr(append(b, ','), l.OriginalUnitPriceMinor)
		b = strconv.AppendInt(append(b, ','), l.GrossAmountMinor, 10)
		b = strconv.AppendInt(append(b, ','), l.DiscountAmountMinor, 10)
		b = strconv.AppendInt(append(b, ','), l.VatAmountMinor, 10)
		b = appendString(append(b, ','), l.TaxEvidence)
		b = appendStringPtr(append(b, ','), l.TaxCountryCode)
		b = append(b, ',')
		if l.TaxRatesAsOf == nil {
			b = append(b, "null"...)
		} else {
			b = appendDate(b, *l.TaxRatesAsOf)
		}
		b = append(b, ",["...)
		for j, r := range l.VatRates {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendString(append(b, '['), r.Category)
			b = strconv.AppendInt(append(b, ','), int64(r.RateBps), 10)
			b = strconv.AppendInt(append(b, ','), r.VatAmountMinor, 10)
			b = append(b, ']')
		}
		b = append(b, "],["...)
		for j, opt := range l.SelectedOptions {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendStringPtr(append(b, '['), opt.OptionID)
			b = appendStringPtr(append(b, ','), opt.OptionGroupID)
			b = appendString(append(b, ','), opt.Name)
			b = strconv.AppendInt(append(b, ','), int64(opt.Quantity), 10)
			b = strconv.AppendInt(append(b, ','), opt.UnitPriceMinor, 10)
			b = strconv.AppendInt(append(b, ','), opt.GrossAmountMinor, 10)
			b = strconv.AppendInt(append(b, ','), opt.VatAmountMinor, 10)
			b = append(b, ']')
		}
		b = append(b, "]]"...)
	}
	return append(b, ']')
}

func appendVatRows(b []byte, rows []domain.VatRow) []byte {
	b = append(b, '[')
	for i, v := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(append(b, '['), v.Category)
		b = strconv.AppendInt(append(b, ','), int64(v.RateBps), 10)
		b = strconv.AppendInt(append(b, ','), v.GrossAmountMinor, 10)
		b = strconv.AppendInt(append(b, ','), v.NetAmountMinor, 10)
		b = strconv.AppendInt(append(b, ','), v.VatAmountMinor, 10)
		b = append(b, ']')
	}
	return append(b, ']')
}

func appendRefundedItems(b []byte, items []domain.RefundedItem) []byte {
	b = append(b, '[')
	for i, r := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendStringPtr(append(b, '['), r.LineID)
		b = appendStringPtr(append(b, ','), r.CatalogItemID)
		b = appendString(append(b, ','), r.Name)
		b = strconv.AppendInt(append(b, ','), int64(r.Quantity), 10)
		b = strconv.AppendInt(append(b, ','), r.AmountMinor, 10)
		b = appendTime(append(b, ','), r.RefundedAt)
		b = append(b, ']')
	}
	return append(b, ']')
}

func appendPaymentReferences(b []byte, refs []domain.PaymentReference) []byte {
	b = append(b, '[')
	for i, p := range refs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(append(b, '['), p.Provider)
		b = appendStringPtr(append(b, ','), p.ReceiptHash)
		b = appendStringPtr(append(b, ','), p.CheckoutID)
		b = appendStringPtr(append(b, ','), p.TransactionID)
		b = appendStringPtr(append(b, ','), p.TransactionCode)
		b = appendStringPtr(append(b, ','), p.SessionID)
		b = strconv.AppendInt(append(b, ','), p.RecordedAmountMinor, 10)
		b = appendString(append(b, ','), p.Currency)
		b = appendTime(append(b, ','), p.CreatedAt)
		b = append(b, ']')
	}
	return append(b, ']')
}

// appendString writes s as a JSON string. Text the ingestion accepted is
// valid UTF-8 without NUL, so only quotes, backslashes and control
// characters need escapes.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := range len(s) {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		if c == '"' || c == '\\' {
			b = append(b, '\\', c)
		} else {
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func appendStringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendString(b, *s)
}

func appendInt64Ptr(b []byte, n *int64) []byte {
	if n == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, *n, 10)
}

func appendDate(b []byte, d bizdate.Date) []byte {
	return append(append(append(b, '"'), d.String()...), '"')
}

// appendTime writes an instant in UTC to the microsecond (what a
// timestamptz keeps), in RFC 3339 with trailing zeros of the fraction
// dropped, as encoding/json writes a time.
func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.UTC().Truncate(time.Microsecond).AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// details are an order's stored arrays as read.
type details struct {
	lines, vatRows, refundedItems, paymentReferences []byte
}

// fill decodes the arrays read into o, up to lineCap lines, and the
// refunded items and payment references up to their caps (the counts on
// the order say how many there are). Payment references that cannot be
// decoded leave them unavailable rather than fail the order: they are
// supplementary evidence.
func (d details) fill(o *domain.Order, lineCap int) error {
	var err error
	if o.Lines, err = readArray(d.lines, lineCap, (*arrayReader).line); err != nil {
		return fmt.Errorf("order %s: lines: %w", o.OrderID, err)
	}
	if d.vatRows == nil { // a search: only the lines are read
		return nil
	}
	if o.VatRows, err = readArray(d.vatRows, math.MaxInt, (*arrayReader).vatRow); err != nil {
		return fmt.Errorf("order %s: VAT rows: %w", o.OrderID, err)
	}
	if o.RefundedItems, err = readArray(d.refundedItems, domain.RefundedItemCap, (*arrayReader).refundedItem); err != nil {
		return fmt.Errorf("order %s: refunded items: %w", o.OrderID, err)
	}
	if o.PaymentReferences, err = readArray(d.paymentReferences, domain.PaymentReferenceCap, (*arrayReader).paymentReference); err != nil {
		o.PaymentReferences, o.PaymentReferencesUnavailable = nil, true
	}
	return nil
}

// readArray reads a stored array, its first max elements with elem (the
// rest are skipped).
func readArray[T any](raw []byte, max int, elem func(*arrayReader) T) ([]T, error) {
	r := &arrayReader{b: string(raw)}
	out := []T{}
	r.each(func() {
		if len(out) == max {
			r.skip()
			return
		}
		out = append(out, elem(r))
	})
	return out, r.end()
}

func (r *arrayReader) vatRow() domain.VatRow {
	r.open()
	defer r.close()
	return domain.VatRow{Category: r.str(), RateBps: r.next().int(), GrossAmountMinor: r.next().int64(),
		NetAmountMinor: r.next().int64(), VatAmountMinor: r.next().int64()}
}

func (r *arrayReader) refundedItem() domain.RefundedItem {
	r.open()
	defer r.close()
	return domain.RefundedItem{LineID: r.strPtr(), CatalogItemID: r.next().strPtr(), Name: r.next().str(),
		Quantity: r.next().int(), AmountMinor: r.next().int64(), RefundedAt: r.next().time()}
}

func (r *arrayReader) paymentReference() domain.PaymentReference {
	r.open()
	defer r.close()
	return domain.PaymentReference{Provider: r.str(), ReceiptHash: r.next().strPtr(), CheckoutID: r.next().strPtr(),
		TransactionID: r.next().strPtr(), TransactionCode: r.next().strPtr(), SessionID: r.next().strPtr(),
		RecordedAmountMinor: r.next().int64(), Currency: r.next().str(), CreatedAt: r.next().time()}
}

// line reads one line's array.
func (r *arrayReader) line() domain.Line {
	r.open()
	l := domain.Line{LineID: r.str(), CatalogItemID: r.next().strPtr(), CatalogItemKind: r.next().strPtr(),
		CatalogCategoryID: r.next().strPtr(), MenuID: r.next().strPtr(), Name: r.next().str(), Category: r.next().strPtr(),
		ItemType: r.next().strPtr(), Quantity: r.next().int(), UnitPriceMinor: r.next().int64(),
		OriginalUnitPriceMinor: r.next().int64Ptr(), GrossAmountMinor: r.next().int64(), DiscountAmountMinor: r.next().int64(),
		VatAmountMinor: r.next().int64(), TaxEvidence: r.next().str(), TaxCountryCode: r.next().strPtr(),
		TaxRatesAsOf: r.next().datePtr(), VatRates: []domain.VatRate{}, SelectedOptions: []domain.SelectedOption{}}
	r.next().each(func() {
		r.open()
		l.VatRates = append(l.VatRates, domain.VatRate{Category: r.str(), RateBps: r.next().int(), VatAmountMinor: r.next().int64()})
		r.close()
	})
	r.next().each(func() {
		r.open()
		l.SelectedOptions = append(l.SelectedOptions, domain.SelectedOption{OptionID: r.strPtr(), OptionGroupID: r.next().strPtr(),
			Name: r.next().str(), Quantity: r.next().int(), UnitPriceMinor: r.next().int64(),
			GrossAmountMinor: r.next().int64(), VatAmountMinor: r.next().int64()})
		r.close()
	})
	r.close()
	return l
}

// arrayReader reads the stored arrays: JSON arrays of strings, integers,
// nulls and arrays, as written above or as PostgreSQL prints jsonb
// (spaces after the separators). The first error sticks; later reads are
// no-ops and end reports it.
type arrayReader struct {
	b   string // strings read are substrings of it
	i   int
	err error
}

func (r *arrayReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("want %s at byte %d", what, r.i)
	}
}

// peek skips white space and reports the next byte (0 at the end or after
// an error).
func (r *arrayReader) peek() byte {
	for r.err == nil && r.i < len(r.b) {
		switch c := r.b[r.i]; c {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return c
		}
	}
	return 0
}

func (r *arrayReader) expect(c byte) {
	if r.peek() != c {
		r.fail(strconv.QuoteRune(rune(c)))
		return
	}
	r.i++
}

func (r *arrayReader) open()  { r.expect('[') }
func (r *arrayReader) close() { r.expect(']') }

// next reads the separator before an array's next value.
func (r *arrayReader) next() *arrayReader {
	r.expect(',')
	return r
}

// each reads an array, calling elem at each element's start.
func (r *arrayReader) each(elem func()) {
	r.open()
	if r.peek() == ']' {
		r.i++
		return
	}
	for r.err == nil {
		elem()
		if r.peek() != ',' {
			break
		}
		r.i++
	}
	r.close()
}

// skip reads past one value.
func (r *arrayReader) skip() {
	switch r.peek() {
	case '[':
		r.each(r.skip)
	case '"':
		r.str()
	default:
		r.token()
	}
}

// end reports the first error, or that more than one value was read.
func (r *arrayReader) end() error {
	if r.peek() != 0 {
		r.fail("the end")
	}
	return r.err
}

// token reads a number, null, true or false.
func (r *arrayReader) token() string {
	r.peek()
	start := r.i
	for r.i < len(r.b) && (r.b[r.i] == '-' || r.b[r.i] >= '0' && r.b[r.i] <= '9' || r.b[r.i] >= 'a' && r.b[r.i] <= 'z') {
		r.i++
	}
	if r.i == start {
		r.fail("a value")
	}
	return r.b[start:r.i]
}

// null reads a null if one is next.
func (r *arrayReader) null() bool {
	if r.peek() == 'n' && r.token() == "null" {
		return true
	}
	return false
}

func (r *arrayReader) str() string {
	if r.peek() != '"' {
		r.fail("a string")
		return ""
	}
	start := r.i
	escaped := false
	for r.i++; r.i < len(r.b); r.i++ {
		switch r.b[r.i] {
		case '\\':
			escaped = true
			r.i++
		case '"':
			r.i++
			if !escaped {
				return r.b[start+1 : r.i-1]
			}
			var s string
			if err := json.Unmarshal([]byte(r.b[start:r.i]), &s); err != nil {
				r.fail("a string")
			}
			return s
		}
	}
	r.fail("a closing quote")
	return ""
}

func (r *arrayReader) strPtr() *string {
	if r.null() {
		return nil
	}
	s := r.str()
	return &s
}

func (r *arrayReader) int64() int64 {
	n, err := strconv.ParseInt(r.token(), 10, 64)
	if err != nil {
		r.fail("an integer")
	}
	return n
}

func (r *arrayReader) int() int {
	n := r.int64()
	if n != int64(int(n)) {
		r.fail("an int")
	}
	return int(n)
}

func (r *arrayReader) int64Ptr() *int64 {
	if r.null() {
		return nil
	}
	n := r.int64()
	return &n
}

func (r *arrayReader) time() time.Time {
	t, err := time.Parse(time.RFC3339Nano, r.str())
	if err != nil {
		r.fail("an RFC 3339 time")
	}
	return t
}

func (r *arrayReader) datePtr() *bizdate.Date {
	if r.null() {
		return nil
	}
	d, err := bizdate.Parse(r.str())
	if err != nil {
		r.fail("a date")
	}
	return &d
}
