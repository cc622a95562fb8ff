package seed

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"partnerapi.dev/pkg/bizdate"

	"partnerapi.dev/services/contracts"
)

// appendOrderJSON appends o and a newline exactly as a json.Encoder with
// SetEscapeHTML(false) writes it, without reflection (the bench size writes
// a million orders).
func appendOrderJSON(b []byte, o *contracts.OrderRecord) []byte {
	b = append(b, `{"restaurantId":`...)
	b = appendString(b, o.RestaurantID)
	b = append(b, `,"timeZone":`...)
	b = appendString(b, o.TimeZone)
	b = append(b, `,"dayStartHour":`...)
	if o.DayStartHour == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*o.DayStartHour), 10)
	}
	b = append(b, `,"currency":`...)
	b = appendString(b, o.Currency)
	b = append(b, `,"country":`...)
	b = appendString(b, o.Country)
	b = append(b, `,"orderId":`...)
	b = appendString(b, o.OrderID)
	b = append(b, `,"restaurantOrderNumber":`...)
	b = strconv.AppendInt(b, o.RestaurantOrderNumber, 10)
	b = append(b, `,"receiptHash":`...)
	b = appendString(b, o.ReceiptHash)
	b = append(b, `,"occurredAt":`...)
	b = appendTimePtr(b, o.OccurredAt)
	b = append(b, `,"orderType":`...)
	b = appendString(b, o.OrderType)
	b = append(b, `,"tableNumber":`...)
	if o.TableNumber == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*o.TableNumber), 10)
	}
	b = append(b, `,"status":`...)
	b = appendString(b, o.Status)
	b = append(b, `,"paymentMethod":`...)
	b = appendString(b, o.PaymentMethod)
	b = append(b, `,"orderOrigin":`...)
	if o.OrderOrigin == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"kind":`...)
		b = appendString(b, o.OrderOrigin.Kind)
		b = append(b, `,"provider":`...)
		b = appendStringPtr(b, o.OrderOrigin.Provider)
		b = append(b, '}')
	}
	b = append(b, `,"originalAmountMinor":`...)
	b = strconv.AppendInt(b, o.OriginalAmountMinor, 10)
	b = append(b, `,"totalAmountMinor":`...)
	b = strconv.AppendInt(b, o.TotalAmountMinor, 10)
	b = append(b, `,"vatMinor":`...)
	b = strconv.AppendInt(b, o.VatMinor, 10)
	b = append(b, `,"refundAmountMinor":`...)
	b = strconv.AppendInt(b, o.RefundAmountMinor, 10)
	b = append(b, `,"discountAmountMinor":`...)
	b = strconv.AppendInt(b, o.DiscountAmountMinor, 10)
	b = append(b, `,"grossSalesMinor":`...)
	b = strconv.AppendInt(b, o.GrossSalesMinor, 10)
	b = append(b, `,"netSalesMinor":`...)
	b = strconv.AppendInt(b, o.NetSalesMinor, 10)
	b = append(b, `,"tipAmountMinor":`...)
	b = strconv.AppendInt(b, o.TipAmountMinor, 10)
	b = append(b, `,"vatAllocationMethod":`...)
	b = appendString(b, o.VatAllocationMethod)
	b = append(b, `,"taxCountryCode":`...)
	b = appendString(b, o.TaxCountryCode)
	b = append(b, `,"taxRatesAsOf":`...)
	b = appendDatePtr(b, o.TaxRatesAsOf)
	b = append(b, `,"lines":`...)
	b = appendList(b, o.Lines, appendLineJSON)
	b = append(b, `,"vatRows":`...)
	b = appendList(b, o.VatRows, func(b []byte, v *contracts.OrderVatRow) []byte {
		b = append(b, `{"category":`...)
		b = appendString(b, v.Category)
		b = append(b, `,"rateBps":`...)
		b = strconv.AppendInt(b, int64(v.RateBps), 10)
		b = append(b, `,"grossAmountMinor":`...)
		b = strconv.AppendInt(b, v.GrossAmountMinor, 10)
		b = append(b, `,"netAmountMinor":`...)
		b = strconv.AppendInt(b, v.NetAmountMinor, 10)
		b = append(b, `,"vatAmountMinor":`...)
		b = strconv.AppendInt(b, v.VatAmountMinor, 10)
		return append(b, '}')
	})
	b = append(b, `,"refundedItems":`...)
	b = appendList(b, o.RefundedItems, func(b []byte, r *contracts.RefundedItem) []byte {
		b = append(b, `{"lineId":`...)
		b = appendStringPtr(b, r.LineID)
		b = append(b, `,"catalogItemId":`...)
		b = appendStringPtr(b, r.CatalogItemID)
		b = append(b, `,"name":`...)
		b = appendString(b, r.Name)
		b = append(b, `,"quantity":`...)
		b = strconv.AppendInt(b, int64(r.Quantity), 10)
		b = append(b, `,"amountMinor":`...)
		b = strconv.AppendInt(b, r.AmountMinor, 10)
		b = append(b, `,"refundedAt":`...)
		b = appendTime(b, r.RefundedAt)
		return append(b, '}')
	})
	b = append(b, `,"paymentReferences":`...)
	b = appendList(b, o.PaymentReferences, func(b []byte, p *contracts.PaymentReference) []byte {
		b = append(b, `{"provider":`...)
		b = appendString(b, p.Provider)
		b = append(b, `,"receiptHash":`...)
		b = appendStringPtr(b, p.ReceiptHash)
		b = append(b, `,"checkoutId":`...)
		b = appendStringPtr(b, p.CheckoutID)
		b = append(b, `,"transactionId":`...)
		b = appendStringPtr(b, p.TransactionID)
		b = append(b, `,"transactionCode":`...)
		b = appendStringPtr(b, p.TransactionCode)
		b = append(b, `,"sessionId":`...)
		b = appendStringPtr(b, p.SessionID)
		b = append(b, `,"recordedAmountMinor":`...)
		b = strconv.AppendInt(b, p.RecordedAmountMinor, 10)
		b = append(b, `,"currency":`...)
		b = appendString(b, p.Currency)
		b = append(b, `,"createdAt":`...)
		b = appendTime(b, p.CreatedAt)
		return append(b, '}')
	})
	return append(b, "}\n"...)
}

func appendLineJSON(b []byte, l *contracts.OrderLine) []byte {
	b = append(b, `{"lineId":`...)
	b = appendString(b, l.LineID)
	b = append(b, `,"catalogItemId":`...)
	b = appendStringPtr(b, l.CatalogItemID)
	b = append(b, `,"catalogItemKind":`...)
	b = appendStringPtr(b, l.CatalogItemKind)
	b = append(b, `,"catalogCategoryId":`...)
	b = appendStringPtr(b, l.CatalogCategoryID)
	b = append(b, `,"menuId":`...)
	b = appendStringPtr(b, l.MenuID)
	b = append(b, `,"name":`...)
	b = appendString(b, l.Name)
	b = append(b, `,"category":`...)
	b = appendStringPtr(b, l.Category)
	b = append(b, `,"itemType":`...)
	b = appendStringPtr(b, l.ItemType)
	b = append(b, `,"quantity":`...)
	b = strconv.AppendInt(b, int64(l.Quantity), 10)
	b = append(b, `,"unitPriceMinor":`...)
	b = strconv.AppendInt(b, l.UnitPriceMinor, 10)
	b = append(b, `,"originalUnitPriceMinor":`...)
	if l.OriginalUnitPriceMinor == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, *l.OriginalUnitPriceMinor, 10)
	}
	b = append(b, `,"grossAmountMinor":`...)
	b = strconv.AppendInt(b, l.GrossAmountMinor, 10)
	b = append(b, `,"discountAmountMinor":`...)
	b = strconv.AppendInt(b, l.DiscountAmountMinor, 10)
	b = append(b, `,"vatAmountMinor":`...)
	b = strconv.AppendInt(b, l.VatAmountMinor, 10)
	b = append(b, `,"taxEvidence":`...)
	b = appendString(b, l.TaxEvidence)
	b = append(b, `,"taxCountryCode":`...)
	b = appendStringPtr(b, l.TaxCountryCode)
	b = append(b, `,"taxRatesAsOf":`...)
	b = appendDatePtr(b, l.TaxRatesAsOf)
	b = append(b, `,"vatRates":`...)
	b = appendList(b, l.VatRates, func(b []byte, v *contracts.LineVatRate) []byte {
		b = append(b, `{"category":`...)
		b = appendString(b, v.Category)
		b = append(b, `,"rateBps":`...)
		b = strconv.AppendInt(b, int64(v.RateBps), 10)
		b = append(b, `,"vatAmountMinor":`...)
		b = strconv.AppendInt(b, v.VatAmountMinor, 10)
		return append(b, '}')
	})
	b = append(b, `,"selectedOptions":`...)
	b = appendList(b, l.SelectedOptions, func(b []byte, o *contracts.SelectedOption) []byte {
		b = append(b, `{"optionId":`...)
		b = appendStringPtr(b, o.OptionID)
		b = append(b, `,"optionGroupId":`...)
		b = appendStringPtr(b, o.OptionGroupID)
		b = append(b, `,"name":`...)
		b = appendString(b, o.Name)
		b = append(b, `,"quantity":`...)
		b = strconv.AppendInt(b, int64(o.Quantity), 10)
		b = append(b, `,"unitPriceMinor":`...)
		b = strconv.AppendInt(b, o.UnitPriceMinor, 10)
		b = append(b, `,"grossAmountMinor":`...)
		b = strconv.AppendInt(b, o.GrossAmountMinor, 10)
		b = append(b, `,"vatAmountMinor":`...)
		b = strconv.AppendInt(b, o.VatAmountMinor, 10)
		return append(b, '}')
	})
	return append(b, '}')
}

// appendList writes a nil slice as null, like encoding/json.
func appendList[T any](b []byte, list []T, elem func([]byte, *T) []byte) []byte {
	if list == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = elem(b, &list[i])
	}
	return append(b, ']')
}

// appendTime writes t as encoding/json does (RFC 3339 with nanoseconds,
// trailing zeros dropped).
func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

func appendTimePtr(b []byte, t *time.Time) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	return appendTime(b, *t)
}

func appendDatePtr(b []byte, d *bizdate.Date) []byte {
	if d == nil {
		return append(b, "null"...)
	}
	return appendString(b, d.String())
}

func appendStringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendString(b, *s)
}

// appendString writes a JSON string; one that needs escaping goes through
// encoding/json (HTML left unescaped, as the generator's encoder does).
func appendString(b []byte, s string) []byte {
	plain := true
	ascii := true
	i := 0
	// Eight bytes at a time while none is a quote, backslash, control
	// character or non-ASCII byte.
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(s); i += 8 {
		b := s[i : i+8]
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		quote, backslash := w^(ones*'"'), w^(ones*'\\')
		if ((w-ones*0x20)&^w|(quote-ones)&^quote|(backslash-ones)&^backslash|w)&highs != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' {
			plain = false
			break
		}
		if c >= 0x80 {
			ascii = false
		}
	}
	if plain && !ascii {
		plain = utf8.ValidString(s) && !strings.ContainsAny(s, "\u2028\u2029")
	}
	if plain {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
