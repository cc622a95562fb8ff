package domain

import (
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"partnerapi.dev/pkg/bizdate"
)

// decode decodes a record written the plain way (exact field names, each
// once, no string escapes, integers as plain integers, null only where the
// field is a pointer or a list) without reflection. It reports false for
// anything else, and the caller decodes the line with encoding/json, which
// then gives the same result or the canonical error. For every line it
// accepts, it fills rec exactly as encoding/json would.
//
// Strings are substrings of line (no copy); optional values and lists come
// from per-decoder arenas, so a record costs a few allocations. A decoder
// is used by one goroutine at a time.
func (d *fastDecoder) decode(line string, rec *Record) bool {
	d.b, d.i = line, 0
	if !d.record(rec) {
		return false
	}
	d.ws()
	return d.i == len(d.b)
}

type fastDecoder struct {
	b string
	i int

	strs   arena[string]
	ints   arena[int]
	int64s arena[int64]
	times  arena[time.Time]
	dates  arena[bizdate.Date]
	origin arena[Origin]

	lines    []Line
	rates    []VatRate
	options  []SelectedOption
	vatRows  []VatRow
	refunds  []RefundedItem
	payments []PaymentReference
}

// arena hands out pointers into shared blocks instead of one allocation per
// value.
type arena[T any] struct{ buf []T }

func (a *arena[T]) new(v T) *T {
	if len(a.buf) == cap(a.buf) {
		a.buf = make([]T, 0, 512)
	}
	a.buf = append(a.buf, v)
	return &a.buf[len(a.buf)-1]
}

func (d *fastDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *fastDecoder) consume(c byte) bool {
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// null consumes a null literal.
func (d *fastDecoder) null() bool {
	d.ws()
	if strings.HasPrefix(d.b[d.i:], "null") {
		d.i += 4
		return true
	}
	return false
}

// rawString returns a string with no escapes and valid UTF-8.
func (d *fastDecoder) rawString() (string, bool) {
	d.ws()
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return "", false
	}
	start := d.i + 1
	ascii := true
	j := start
	// Eight bytes at a time while none is a quote, backslash, control
	// character or non-ASCII byte.
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; j+8 <= len(d.b); j += 8 {
		b := d.b[j : j+8]
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		quote, backslash := w^(ones*'"'), w^(ones*'\\')
		special := (w-ones*0x20)&^w | (quote-ones)&^quote | (backslash-ones)&^backslash | w
		if special&highs != 0 {
			break
		}
	}
	for ; j < len(d.b); j++ {
		c := d.b[j]
		switch {
		case c == '"':
			s := d.b[start:j]
			if !ascii && !utf8.ValidString(s) {
				return "", false
			}
			d.i = j + 1
			return s, true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= 0x80:
			ascii = false
		}
	}
	return "", false
}

func (d *fastDecoder) str(p *string) bool {
	s, ok := d.rawString()
	if ok {
		*p = s
	}
	return ok
}

func (d *fastDecoder) strPtr(p **string) bool {
	if d.null() {
		*p = nil
		return true
	}
	var s string
	if !d.str(&s) {
		return false
	}
	*p = d.strs.new(s)
	return true
}

// int64 reads an integer literal as encoding/json does for an integer field
// (up to 18 digits, so it cannot overflow).
func (d *fastDecoder) int64(p *int64) bool {
	d.ws()
	j := d.i
	neg := false
	if j < len(d.b) && d.b[j] == '-' {
		neg = true
		j++
	}
	start := j
	var v int64
	for j < len(d.b) && d.b[j] >= '0' && d.b[j] <= '9' {
		v = v*10 + int64(d.b[j]-'0')
		j++
	}
	n := j - start
	if n == 0 || n > 18 || (n > 1 && d.b[start] == '0') {
		return false
	}
	if j < len(d.b) {
		switch d.b[j] {
		case '.', 'e', 'E':
			return false
		}
	}
	if neg {
		v = -v
	}
	*p = v
	d.i = j
	return true
}

func (d *fastDecoder) int(p *int) bool {
	var v int64
	if !d.int64(&v) {
		return false
	}
	*p = int(v)
	return true
}

func (d *fastDecoder) intPtr(p **int) bool {
	if d.null() {
		*p = nil
		return true
	}
	var v int
	if !d.int(&v) {
		return false
	}
	*p = d.ints.new(v)
	return true
}

func (d *fastDecoder) int64Ptr(p **int64) bool {
	if d.null() {
		*p = nil
		return true
	}
	var v int64
	if !d.int64(&v) {
		return false
	}
	*p = d.int64s.new(v)
	return true
}

// time reads an RFC 3339 string as time.Time's UnmarshalJSON does (for a
// string with no escapes it is UnmarshalText of the contents).
func (d *fastDecoder) time(p *time.Time) bool {
	s, ok := d.rawString()
	if !ok {
		return false
	}
	var buf [40]byte
	return len(s) <= len(buf) && p.UnmarshalText(append(buf[:0], s...)) == nil
}

func (d *fastDecoder) timePtr(p **time.Time) bool {
	if d.null() {
		*p = nil
		return true
	}
	var t time.Time
	if !d.time(&t) {
		return false
	}
	*p = d.times.new(t)
	return true
}

// datePtr reads a date as bizdate.Date's UnmarshalText does.
func (d *fastDecoder) datePtr(p **bizdate.Date) bool {
	if d.null() {
		*p = nil
		return true
	}
	s, ok := d.rawString()
	if !ok {
		return false
	}
	v, err := bizdate.Parse(s)
	if err != nil {
		return false
	}
	*p = d.dates.new(v)
	return true
}

// object reads {"key": value, ...}, calling field for each key; field reads
// the value and reports false for an unknown key or a value it cannot take.
// A key given twice is refused (encoding/json merges; the slow path does it).
func (d *fastDecoder) object(field func(key string, seen *uint64) bool) bool {
	if !d.consume('{') {
		return false
	}
	var seen uint64
	if d.consume('}') {
		return true
	}
	for {
		key, ok := d.rawString()
		if !ok || !d.consume(':') {
			return false
		}
		if !field(key, &seen) {
			return false
		}
		if d.consume(',') {
			continue
		}
		return d.consume('}')
	}
}

// once marks field bit n seen, refusing a repeat.
func once(seen *uint64, n uint) bool {
	if *seen&(1<<n) != 0 {
		return false
	}
	*seen |= 1 << n
	return true
}

// fastArray reads null (nil) or [elem, ...] (non-nil, possibly empty) into
// a slice; elem decodes one element into the pointer it is given. scratch
// collects the elements, so the slice is allocated once, at its size.
func fastArray[T any](d *fastDecoder, p *[]T, scratch *[]T, elem func(*T) bool) bool {
	if d.null() {
		*p = nil
		return true
	}
	if !d.consume('[') {
		return false
	}
	if d.consume(']') {
		*p = []T{}
		return true
	}
	out := (*scratch)[:0]
	defer func() { *scratch = out[:0] }()
	for {
		var v T
		if !elem(&v) {
			return false
		}
		out = append(out, v)
		if d.consume(',') {
			continue
		}
		if !d.consume(']') {
			return false
		}
		*p = slices.Clone(out)
		return true
	}
}

func (d *fastDecoder) record(r *Record) bool {
	return d.object(func(key string, seen *uint64) bool {
		switch key {
		case "restaurantId":
			return once(seen, 0) && d.str(&r.RestaurantID)
		case "timeZone":
			return once(seen, 1) && d.str(&r.TimeZone)
		case "dayStartHour":
			return once(seen, 2) && d.intPtr(&r.DayStartHour)
		case "currency":
			return once(seen, 3) && d.str(&r.Currency)
		case "country":
			return once(seen, 4) && d.str(&r.Country)
		case "orderId":
			return once(seen, 5) && d.str(&r.OrderID)
		case "restaurantOrderNumber":
			return once(seen, 6) && d.int64(&r.RestaurantOrderNumber)
		case "receiptHash":
			return once(seen, 7) && d.str(&r.ReceiptHash)
		case "occurredAt":
			return once(seen, 8) && d.timePtr(&r.OccurredAt)
		case "orderType":
			return once(seen, 9) && d.str(&r.OrderType)
		case "tableNumber":
			return once(seen, 10) && d.intPtr(&r.TableNumber)
		case "status":
			return once(seen, 11) && d.str(&r.Status)
		case "paymentMethod":
			return once(seen, 12) && d.str(&r.PaymentMethod)
		case "orderOrigin":
			if !once(seen, 13) {
				return false
			}
			if d.null() {
				r.OrderOrigin = nil
				return true
			}
			o := d.origin.new(Origin{})
			r.OrderOrigin = o
			return d.object(func(key string, seen *uint64) bool {
				switch key {
				case "kind":
					return once(seen, 0) && d.str(&o.Kind)
				case "provider":
					return once(seen, 1) && d.strPtr(&o.Provider)
				}
				return false
			})
		case "originalAmountMinor":
			return once(seen, 14) && d.int64(&r.OriginalAmountMinor)
		case "totalAmountMinor":
			return once(seen, 15) && d.int64(&r.TotalAmountMinor)
		case "vatMinor":
			return once(seen, 16) && d.int64(&r.VatMinor)
		case "refundAmountMinor":
			return once(seen, 17) && d.int64(&r.RefundAmountMinor)
		case "discountAmountMinor":
			return once(seen, 18) && d.int64(&r.DiscountAmountMinor)
		case "grossSalesMinor":
			return once(seen, 19) && d.int64(&r.GrossSalesMinor)
		case "netSalesMinor":
			return once(seen, 20) && d.int64(&r.NetSalesMinor)
		case "tipAmountMinor":
			return once(seen, 21) && d.int64(&r.TipAmountMinor)
		case "vatAllocationMethod":
			return once(seen, 22) && d.str(&r.VatAllocationMethod)
		case "taxCountryCode":
			return once(seen, 23) && d.str(&r.TaxCountryCode)
		case "taxRatesAsOf":
			return once(seen, 24) && d.datePtr(&r.TaxRatesAsOf)
		case "lines":
			return once(seen, 25) && fastArray(d, &r.Lines, &d.lines, d.line)
		case "vatRows":
			return once(seen, 26) && fastArray(d, &r.VatRows, &d.vatRows, d.vatRow)
		case "refundedItems":
			return once(seen, 27) && fastArray(d, &r.RefundedItems, &d.refunds, d.refundedItem)
		case "paymentReferences":
			return once(seen, 28) && fastArray(d, &r.PaymentReferences, &d.payments, d.paymentReference)
		}
		return false
	})
}

func (d *fastDecoder) line(l *Line) bool {
	return d.object(func(key string, seen *uint64) bool {
		switch key {
		case "lineId":
			return once(seen, 0) && d.str(&l.LineID)
		case "catalogItemId":
			return once(seen, 1) && d.strPtr(&l.CatalogItemID)
		case "catalogItemKind":
			return once(seen, 2) && d.strPtr(&l.CatalogItemKind)
		case "catalogCategoryId":
			return once(seen, 3) && d.strPtr(&l.CatalogCategoryID)
		case "menuId":
			return once(seen, 4) && d.strPtr(&l.MenuID)
		case "name":
			return once(seen, 5) && d.str(&l.Name)
		case "category":
			return once(seen, 6) && d.strPtr(&l.Category)
		case "itemType":
			return once(seen, 7) && d.strPtr(&l.ItemType)
		case "quantity":
			return once(seen, 8) && d.int(&l.Quantity)
		case "unitPriceMinor":
			return once(seen, 9) && d.int64(&l.UnitPriceMinor)
		case "originalUnitPriceMinor":
			return once(seen, 10) && d.int64Ptr(&l.OriginalUnitPriceMinor)
		case "grossAmountMinor":
			return once(seen, 11) && d.int64(&l.GrossAmountMinor)
		case "discountAmountMinor":
			return once(seen, 12) && d.int64(&l.DiscountAmountMinor)
		case "vatAmountMinor":
			return once(seen, 13) && d.int64(&l.VatAmountMinor)
		case "taxEvidence":
			return once(seen, 14) && d.str(&l.TaxEvidence)
		case "taxCountryCode":
			return once(seen, 15) && d.strPtr(&l.TaxCountryCode)
		case "taxRatesAsOf":
			return once(seen, 16) && d.datePtr(&l.TaxRatesAsOf)
		case "vatRates":
			return once(seen, 17) && fastArray(d, &l.VatRates, &d.rates, d.vatRate)
		case "selectedOptions":
			return once(seen, 18) && fastArray(d, &l.SelectedOptions, &d.options, d.selectedOption)
		}
		return false
	})
}

func (d *fastDecoder) vatRate(v *VatRate) bool {
	return d.object(func(key string, seen *uint64) bool {
		switch key {
		case "category":
			return once(seen, 0) && d.str(&v.Category)
		case "rateBps":
			return once(seen, 1) && d.int(&v.RateBps)
		case "vatAmountMinor":
			return once(seen, 2) && d.int64(&v.VatAmountMinor)
		}
		return false
	})
}

func (d *fastDecoder) selectedOption(o *SelectedOption) bool {
	return d.object(func(key string, seen *uint64) bool {
		switch key {
		case "optionId":
			return once(seen, 0) && d.strPtr(&o.OptionID)
		case "optionGroupId":
			return once(seen, 1) && d.strPtr(&o.OptionGroupID)
		case "name":
			return once(seen, 2) && d.str(&o.Name)
		case "quantity":
			return once(seen, 3) && d.int(&o.Quantity)
		case "unitPriceMinor":
			return once(seen, 4) && d.int64(&o.UnitPriceMinor)
		case "grossAmountMinor":
			return once(seen, 5) && d.int64(&o.GrossAmountMinor)
		case "vatAmountMinor":
			return once(seen, 6) && d.int64(&o.VatAmountMinor)
		}
		return false
	})
}

func (d *fastDecoder) vatRow(v *VatRow) bool {
	return d.object(func(key string, seen *uint64) bool {
		switch key {
		case "category":
			return once(seen, 0) && d.str(&v.Category)
		case "rateBps":
			return once(seen, 1) && d.int(&v.RateBps)
		case "grossAmountMinor":
			return once(seen, 2) && d.int64(&v.GrossAmountMinor)
		case "netAmountMinor":
			return once(seen, 3) && d.int64(&v.NetAmountMinor)
		case "vatAmountMinor":
			return once(seen, 4) && d.int64(&v.VatAmountMinor)
		}
		return false
	})
}

func (d *fastDecoder) refundedItem(r *RefundedItem) bool {
	return d.object(func(key string, seen *uint64) bool {
		switch key {
		case "lineId":
			return once(seen, 0) && d.strPtr(&r.LineID)
		case "catalogItemId":
			return once(seen, 1) && d.strPtr(&r.CatalogItemID)
		case "name":
			return once(seen, 2) && d.str(&r.Name)
		case "quantity":
			return once(seen, 3) && d.int(&r.Quantity)
		case "amountMinor":
			return once(seen, 4) && d.int64(&r.AmountMinor)
		case "refundedAt":
			return once(seen, 5) && d.time(&r.RefundedAt)
		}
		return false
	})
}

func (d *fastDecoder) paymentReference(p *PaymentReference) bool {
	return d.object(func(key string, seen *uint64) bool {
		switch key {
		case "provider":
			return once(seen, 0) && d.str(&p.Provider)
		case "receiptHash":
			return once(seen, 1) && d.strPtr(&p.ReceiptHash)
		case "checkoutId":
			return once(seen, 2) && d.strPtr(&p.CheckoutID)
		case "transactionId":
			return once(seen, 3) && d.strPtr(&p.TransactionID)
		case "transactionCode":
			return once(seen, 4) && d.strPtr(&p.TransactionCode)
		case "sessionId":
			return once(seen, 5) && d.strPtr(&p.SessionID)
		case "recordedAmountMinor":
			return once(seen, 6) && d.int64(&p.RecordedAmountMinor)
		case "currency":
			return once(seen, 7) && d.str(&p.Currency)
		case "createdAt":
			return once(seen, 8) && d.time(&p.CreatedAt)
		}
		return false
	})
}
