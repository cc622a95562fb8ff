package store

import (
	"encoding/json"
	"strconv"
	"time"

	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/services/orders/internal/domain"
)

// An order's lines (with their options), VAT rows, refunded items and
// payment references are stored in order_details, one row per order beside
// its orders row, as JSON arrays in the ingestion record's own JSON
// (package contracts): nothing searches them, and every read wants them
// whole with the order. One row instead of a row per line, option, VAT row,
// refund and reference makes a bulk load a few rows per order and a
// details read one lookup more than the order's.
//
// The arrays are written here, by hand, the same way on every path (the
// replacing upsert and the bulk load); migration 10 writes the same values
// from the tables it replaces.

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
		b = appendString(append(b, `{"lineId":`...), l.LineID)
		b = appendStringPtr(append(b, `,"catalogItemId":`...), l.CatalogItemID)
		b = appendStringPtr(append(b, `,"catalogItemKind":`...), l.CatalogItemKind)
		b = appendStringPtr(append(b, `,"catalogCategoryId":`...), l.CatalogCategoryID)
		b = appendStringPtr(append(b, `,"menuId":`...), l.MenuID)
		b = appendString(append(b, `,"name":`...), l.Name)
		b = appendStringPtr(append(b, `,"category":`...), l.Category)
		b = appendStringPtr(append(b, `,"itemType":`...), l.ItemType)
		b = strconv.AppendInt(append(b, `,"quantity":`...), int64(l.Quantity), 10)
		b = strconv.AppendInt(append(b, `,"unitPriceMinor":`...), l.UnitPriceMinor, 10)
		b = append(b, `,"originalUnitPriceMinor":`...)
		if l.OriginalUnitPriceMinor == nil {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendInt(b, *l.OriginalUnitPriceMinor, 10)
		}
		b = strconv.AppendInt(append(b, `,"grossAmountMinor":`...), l.GrossAmountMinor, 10)
		b = strconv.AppendInt(append(b, `,"discountAmountMinor":`...), l.DiscountAmountMinor, 10)
		b = strconv.AppendInt(append(b, `,"vatAmountMinor":`...), l.VatAmountMinor, 10)
		b = appendString(append(b, `,"taxEvidence":`...), l.TaxEvidence)
		b = appendStringPtr(append(b, `,"taxCountryCode":`...), l.TaxCountryCode)
		b = append(b, `,"taxRatesAsOf":`...)
		if l.TaxRatesAsOf == nil {
			b = append(b, "null"...)
		} else {
			b = appendDate(b, *l.TaxRatesAsOf)
		}
		b = appendVatRates(append(b, `,"vatRates":`...), l.VatRates)
		b = append(b, `,"selectedOptions":[`...)
		for j, opt := range l.SelectedOptions {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendStringPtr(append(b, `{"optionId":`...), opt.OptionID)
			b = appendStringPtr(append(b, `,"optionGroupId":`...), opt.OptionGroupID)
			b = appendString(append(b, `,"name":`...), opt.Name)
			b = strconv.AppendInt(append(b, `,"quantity":`...), int64(opt.Quantity), 10)
			b = strconv.AppendInt(append(b, `,"unitPriceMinor":`...), opt.UnitPriceMinor, 10)
			b = strconv.AppendInt(append(b, `,"grossAmountMinor":`...), opt.GrossAmountMinor, 10)
			b = strconv.AppendInt(append(b, `,"vatAmountMinor":`...), opt.VatAmountMinor, 10)
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	return append(b, ']')
}

func appendVatRates(b []byte, rates []domain.VatRate) []byte {
	b = append(b, '[')
	for i, r := range rates {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(append(b, `{"category":`...), r.Category)
		b = strconv.AppendInt(append(b, `,"rateBps":`...), int64(r.RateBps), 10)
		b = strconv.AppendInt(append(b, `,"vatAmountMinor":`...), r.VatAmountMinor, 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

func appendVatRows(b []byte, rows []domain.VatRow) []byte {
	b = append(b, '[')
	for i, v := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(append(b, `{"category":`...), v.Category)
		b = strconv.AppendInt(append(b, `,"rateBps":`...), int64(v.RateBps), 10)
		b = strconv.AppendInt(append(b, `,"grossAmountMinor":`...), v.GrossAmountMinor, 10)
		b = strconv.AppendInt(append(b, `,"netAmountMinor":`...), v.NetAmountMinor, 10)
		b = strconv.AppendInt(append(b, `,"vatAmountMinor":`...), v.VatAmountMinor, 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

func appendRefundedItems(b []byte, items []domain.RefundedItem) []byte {
	b = append(b, '[')
	for i, r := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendStringPtr(append(b, `{"lineId":`...), r.LineID)
		b = appendStringPtr(append(b, `,"catalogItemId":`...), r.CatalogItemID)
		b = appendString(append(b, `,"name":`...), r.Name)
		b = strconv.AppendInt(append(b, `,"quantity":`...), int64(r.Quantity), 10)
		b = strconv.AppendInt(append(b, `,"amountMinor":`...), r.AmountMinor, 10)
		b = appendTime(append(b, `,"refundedAt":`...), r.RefundedAt)
		b = append(b, '}')
	}
	return append(b, ']')
}

func appendPaymentReferences(b []byte, refs []domain.PaymentReference) []byte {
	b = append(b, '[')
	for i, p := range refs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(append(b, `{"provider":`...), p.Provider)
		b = appendStringPtr(append(b, `,"receiptHash":`...), p.ReceiptHash)
		b = appendStringPtr(append(b, `,"checkoutId":`...), p.CheckoutID)
		b = appendStringPtr(append(b, `,"transactionId":`...), p.TransactionID)
		b = appendStringPtr(append(b, `,"transactionCode":`...), p.TransactionCode)
		b = appendStringPtr(append(b, `,"sessionId":`...), p.SessionID)
		b = strconv.AppendInt(append(b, `,"recordedAmountMinor":`...), p.RecordedAmountMinor, 10)
		b = appendString(append(b, `,"currency":`...), p.Currency)
		b = appendTime(append(b, `,"createdAt":`...), p.CreatedAt)
		b = append(b, '}')
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

// details are an order's stored arrays as read: raw JSON.
type details struct {
	lines, vatRows, refundedItems, paymentReferences []byte
}

// fill decodes the arrays read into o, up to lineCap lines, and the
// refunded items and payment references up to their caps (the counts on
// the order say how many there are). Payment references that cannot be
// decoded leave them unavailable rather than fail the order: they are
// supplementary evidence.
func (d details) fill(o *domain.Order, lineCap int) error {
	o.Lines = []domain.Line{}
	if err := json.Unmarshal(d.lines, &o.Lines); err != nil {
		return err
	}
	o.Lines = o.Lines[:min(len(o.Lines), lineCap)]
	if d.vatRows == nil { // a search: only the lines are read
		return nil
	}
	o.VatRows, o.RefundedItems, o.PaymentReferences = []domain.VatRow{}, []domain.RefundedItem{}, []domain.PaymentReference{}
	if err := json.Unmarshal(d.vatRows, &o.VatRows); err != nil {
		return err
	}
	if err := json.Unmarshal(d.refundedItems, &o.RefundedItems); err != nil {
		return err
	}
	o.RefundedItems = o.RefundedItems[:min(len(o.RefundedItems), domain.RefundedItemCap)]
	if err := json.Unmarshal(d.paymentReferences, &o.PaymentReferences); err != nil {
		o.PaymentReferences, o.PaymentReferencesUnavailable = nil, true
		return nil
	}
	o.PaymentReferences = o.PaymentReferences[:min(len(o.PaymentReferences), domain.PaymentReferenceCap)]
	return nil
}
