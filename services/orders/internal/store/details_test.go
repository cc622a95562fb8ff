package store

import (
	"bytes"
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
		// As PostgreSQL prints jsonb (migration 11 writes that), with white
		// space between the values.
		var spaced [4][]byte
		for i, b := range bufs {
			if !json.Valid(b) {
				t.Fatalf("not JSON: %s", b)
			}
			var out bytes.Buffer
			if err := json.Indent(&out, b, "", " "); err != nil {
				t.Fatal(err)
			}
			spaced[i] = out.Bytes()
		}
		again := domain.Order{LineCount: len(o.Lines)}
		if err := (details{spaced[0], spaced[1], spaced[2], spaced[3]}).fill(&again, len(o.Lines)); err != nil || !reflect.DeepEqual(again, want) {
			t.Fatalf("decoded with white space (%v)\n%+v\nwritten\n%+v", err, again, want)
		}
	}
}

// A damaged array fails the order, except the payment references, which
// are then unavailable; a search's line cap skips the lines past it.
func TestDetailsThatCannotBeRead(t *testing.T) {
	line := `["l1",null,null,null,null,"Soup",null,null,1,100,null,100,0,10,"snapshot",null,null,[["standard",1000,10]],[]]`
	lines := []byte("[" + line + "," + line + "]")
	ref := `["card",null,null,"t1",null,null,100,"EUR","2026-01-02T03:04:05.123456Z"]`
	for name, d := range map[string]details{
		"truncated":        {lines: lines[:len(lines)-1], vatRows: []byte(`[]`), refundedItems: []byte(`[]`), paymentReferences: []byte(`[]`)},
		"object":           {lines: []byte(`[{"lineId":"l1"}]`), vatRows: []byte(`[]`), refundedItems: []byte(`[]`), paymentReferences: []byte(`[]`)},
		"field missing":    {lines: []byte(`[["l1"]]`), vatRows: []byte(`[]`), refundedItems: []byte(`[]`), paymentReferences: []byte(`[]`)},
		"text for integer": {lines: lines, vatRows: []byte(`[["standard","1000",1,1,1]]`), refundedItems: []byte(`[]`), paymentReferences: []byte(`[]`)},
		"trailing value":   {lines: lines, vatRows: []byte(`[] []`), refundedItems: []byte(`[]`), paymentReferences: []byte(`[]`)},
		"bad time":         {lines: lines, vatRows: []byte(`[]`), refundedItems: []byte(`[[null,null,"Soup",1,100,"yesterday"]]`), paymentReferences: []byte(`[]`)},
	} {
		var o domain.Order
		if err := d.fill(&o, 20); err == nil {
			t.Errorf("%s: read without an error: %+v", name, o)
		}
	}
	var o domain.Order
	if err := (details{lines, []byte(`[]`), []byte(`[]`), []byte("[" + ref + ",[1]]")}).fill(&o, 20); err != nil ||
		!o.PaymentReferencesUnavailable || o.PaymentReferences != nil || len(o.Lines) != 2 {
		t.Errorf("damaged payment references: %v, %+v", err, o)
	}
	o = domain.Order{}
	if err := (details{lines: lines}).fill(&o, 1); err != nil || len(o.Lines) != 1 || o.Lines[0].VatRates[0].RateBps != 1000 {
		t.Errorf("a search's first line: %v, %+v", err, o.Lines)
	}
	o = domain.Order{}
	if err := (details{lines, []byte(`[]`), []byte(`[]`), []byte("[" + ref + "]")}).fill(&o, 20); err != nil ||
		o.PaymentReferences[0].CreatedAt != time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC) || o.PaymentReferences[0].TransactionID == nil {
		t.Errorf("a payment reference: %v, %+v", err, o.PaymentReferences)
	}
}

// BenchmarkDetailsFill decodes the arrays of an order of three lines (one
// with an option), two VAT rows and a payment reference, as a details read
// does.
func BenchmarkDetailsFill(b *testing.B) {
	id := func(s string) *string { return &s }
	line := domain.Line{LineID: "5e842b66-9011-48b0-80af-ec4f0ef63af8", CatalogItemID: id("1a2a0da0-ae78-4f34-b58b-c7268b58a2b4"),
		CatalogItemKind: id("menu_item"), CatalogCategoryID: id("efc2229c-a107-4fd3-88a6-d8d6be2beda7"),
		MenuID: id("95d840f8-65cb-41c5-943b-5a09ad42bb6a"), Name: "Husets vin", Category: id("Bar"), ItemType: id("alcohol"),
		Quantity: 1, UnitPriceMinor: 10900, GrossAmountMinor: 10900, VatAmountMinor: 2180, TaxEvidence: "snapshot",
		TaxCountryCode: id("SE"), VatRates: []domain.VatRate{{Category: "standard", RateBps: 2500, VatAmountMinor: 2180}},
		SelectedOptions: []domain.SelectedOption{}}
	withOption := line
	withOption.SelectedOptions = []domain.SelectedOption{{OptionID: id("o1"), OptionGroupID: id("g1"), Name: "Large", Quantity: 1, UnitPriceMinor: 200, GrossAmountMinor: 200, VatAmountMinor: 40}}
	o := domain.Order{Lines: []domain.Line{line, withOption, line},
		VatRows: []domain.VatRow{{Category: "standard", RateBps: 2500, GrossAmountMinor: 10900, NetAmountMinor: 8720, VatAmountMinor: 2180},
			{Category: "reduced", RateBps: 1200, GrossAmountMinor: 5000, NetAmountMinor: 4464, VatAmountMinor: 536}},
		PaymentReferences: []domain.PaymentReference{{Provider: "wolt", ReceiptHash: id("b44a40f23aac97bc12202680bffc63c02a632fb8f0113d0521ec1bd0f51f9cc9"),
			TransactionID: id("wo_d4e0b9a9c576af308192"), RecordedAmountMinor: 10900, Currency: "SEK", CreatedAt: time.Now()}}}
	var bufs [4][]byte
	appendDetails(&bufs, o)
	d := details{bufs[0], bufs[1], bufs[2], bufs[3]}
	b.ReportAllocs()
	for b.Loop() {
		var got domain.Order
		if err := d.fill(&got, 20); err != nil {
			b.Fatal(err)
		}
	}
}
