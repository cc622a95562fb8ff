package store

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/services/orders/internal/domain"
)

// The hand-written arrays decode, with encoding/json, to exactly the parts
// they were written from, whatever the text holds (quotes, backslashes,
// control characters, non-ASCII) and with or without the optional values.
func TestDetailsDecodeToWhatWasWritten(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	texts := []string{"", "Soup", `Crème "Brûlée"`, "a\\b", "tab\there\nnew", "\x01\x1f", "漢字 🍜", "</script>&"}
	text := func() string { return texts[rnd.IntN(len(texts))] }
	opt := func() *string {
		if rnd.IntN(3) == 0 {
			return nil
		}
		s := text()
		return &s
	}
	num := func() int64 { return rnd.Int64N(1<<53) - 1<<52 }
	at := func() time.Time {
		return time.Unix(rnd.Int64N(4e9), rnd.Int64N(1e9)).In(time.FixedZone("x", 7200)) // written in UTC, to the µs
	}
	for range 500 {
		var o domain.Order
		for range rnd.IntN(4) {
			l := domain.Line{LineID: text(), CatalogItemID: opt(), CatalogItemKind: opt(), CatalogCategoryID: opt(), MenuID: opt(),
				Name: text(), Category: opt(), ItemType: opt(), Quantity: int(num()), UnitPriceMinor: num(), GrossAmountMinor: num(),
				DiscountAmountMinor: num(), VatAmountMinor: num(), TaxEvidence: text(), TaxCountryCode: opt(),
				VatRates: []domain.VatRate{}, SelectedOptions: []domain.SelectedOption{}}
			if rnd.IntN(2) == 0 {
				v := num()
				l.OriginalUnitPriceMinor = &v
				d := bizdate.FromTime(at().UTC())
				l.TaxRatesAsOf = &d
			}
			for range rnd.IntN(3) {
				l.VatRates = append(l.VatRates, domain.VatRate{Category: text(), RateBps: int(num()), VatAmountMinor: num()})
			}
			for range rnd.IntN(3) {
				l.SelectedOptions = append(l.SelectedOptions, domain.SelectedOption{OptionID: opt(), OptionGroupID: opt(), Name: text(),
					Quantity: int(num()), UnitPriceMinor: num(), GrossAmountMinor: num(), VatAmountMinor: num()})
			}
			o.Lines = append(o.Lines, l)
		}
		for range rnd.IntN(3) {
			o.VatRows = append(o.VatRows, domain.VatRow{Category: text(), RateBps: int(num()), GrossAmountMinor: num(), NetAmountMinor: num(), VatAmountMinor: num()})
		}
		for range rnd.IntN(3) {
			o.RefundedItems = append(o.RefundedItems, domain.RefundedItem{LineID: opt(), CatalogItemID: opt(), Name: text(),
				Quantity: int(num()), AmountMinor: num(), RefundedAt: at()})
		}
		for range rnd.IntN(3) {
			o.PaymentReferences = append(o.PaymentReferences, domain.PaymentReference{Provider: text(), ReceiptHash: opt(), CheckoutID: opt(),
				TransactionID: opt(), TransactionCode: opt(), SessionID: opt(), RecordedAmountMinor: num(), Currency: text(), CreatedAt: at()})
		}

		var bufs [4][]byte
		appendDetails(&bufs, o)
		got := domain.Order{LineCount: len(o.Lines)}
		if err := (details{bufs[0], bufs[1], bufs[2], bufs[3]}).fill(&got, len(o.Lines)); err != nil {
			t.Fatalf("%v in\n%s", err, bufs)
		}
		want := o
		want.Lines = append([]domain.Line{}, o.Lines...)
		want.VatRows = append([]domain.VatRow{}, o.VatRows...)
		want.RefundedItems = append([]domain.RefundedItem{}, o.RefundedItems...)
		for i, r := range want.RefundedItems {
			want.RefundedItems[i].RefundedAt = r.RefundedAt.UTC().Truncate(time.Microsecond)
		}
		want.PaymentReferences = append([]domain.PaymentReference{}, o.PaymentReferences...)
		for i, p := range want.PaymentReferences {
			want.PaymentReferences[i].CreatedAt = p.CreatedAt.UTC().Truncate(time.Microsecond)
		}
		want.LineCount = len(o.Lines)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded\n%+v\nwritten\n%+v\nfrom\n%s", got, want, bufs)
		}
		for _, b := range bufs {
			if !json.Valid(b) {
				t.Fatalf("not JSON: %s", b)
			}
		}
	}
}
