package domain

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// A record with every field, as the seed generator writes it.
const fullRecord = `{"restaurantId":"29db7f54-6f7c-48ea-964c-b99e91c78552","timeZone":"Europe/Helsinki","dayStartHour":4,"currency":"EUR","country":"FI",` +
	`"orderId":"ord_f30130dc3f0f22cf8889a528","restaurantOrderNumber":9345,"receiptHash":"362b9c5d","occurredAt":"2026-07-19T08:33:46.724Z",` +
	`"orderType":"dine_in","tableNumber":30,"status":"partially_refunded","paymentMethod":"manual","orderOrigin":{"kind":"marketplace","provider":"wolt"},` +
	`"originalAmountMinor":1870,"totalAmountMinor":1870,"vatMinor":223,"refundAmountMinor":520,"discountAmountMinor":0,"grossSalesMinor":1350,` +
	`"netSalesMinor":1189,"tipAmountMinor":0,"vatAllocationMethod":"stored","taxCountryCode":"FI","taxRatesAsOf":"2026-01-01",` +
	`"lines":[{"lineId":"e4306f16","catalogItemId":"a8d6aa8a","catalogItemKind":"menu_item","catalogCategoryId":"ee2824a1","menuId":"25315df2",` +
	`"name":"Caffè Latte","category":"Drinks","itemType":"drink","quantity":1,"unitPriceMinor":520,"originalUnitPriceMinor":650,"grossAmountMinor":520,` +
	`"discountAmountMinor":0,"vatAmountMinor":62,"taxEvidence":"snapshot","taxCountryCode":"FI","taxRatesAsOf":"2026-01-01",` +
	`"vatRates":[{"category":"reduced","rateBps":1350,"vatAmountMinor":62}],"selectedOptions":[{"optionId":"o1","optionGroupId":"g1","name":"Oat Milk","quantity":1,"unitPriceMinor":50,"grossAmountMinor":50,"vatAmountMinor":6}]},` +
	`{"lineId":"55543b41","catalogItemId":null,"catalogItemKind":null,"catalogCategoryId":null,"menuId":null,"name":"Cinnamon Bun","category":null,` +
	`"itemType":null,"quantity":2,"unitPriceMinor":450,"originalUnitPriceMinor":null,"grossAmountMinor":900,"discountAmountMinor":0,"vatAmountMinor":107,` +
	`"taxEvidence":"legacy","taxCountryCode":null,"taxRatesAsOf":null,"vatRates":[],"selectedOptions":[]}],` +
	`"vatRows":[{"category":"reduced","rateBps":1350,"grossAmountMinor":1870,"netAmountMinor":1647,"vatAmountMinor":223}],` +
	`"refundedItems":[{"lineId":"e4306f16","catalogItemId":null,"name":"Caffè Latte","quantity":1,"amountMinor":520,"refundedAt":"2026-07-21T10:00:00.123456789+03:00"}],` +
	`"paymentReferences":[{"provider":"wolt","receiptHash":"362b9c5d","checkoutId":null,"transactionId":"wo_1","transactionCode":null,"sessionId":null,` +
	`"recordedAmountMinor":1870,"currency":"EUR","createdAt":"2026-07-19T08:34:43.724Z"}]}`

func fastJSONCases() []string {
	r := strings.NewReplacer
	cases := []string{
		fullRecord,
		"  \t" + strings.ReplaceAll(fullRecord, ",", " ,\n ") + " \r\n",
		strings.ReplaceAll(fullRecord, ":", " : "),
		`{}`, `[]`, `null`, ``, `{`, `{"orderId"}`, `{"orderId":}`, `{"orderId":"a",}`,
		fullRecord + ` {"a":1}`, fullRecord + `}`, fullRecord + ` x`, fullRecord + "\t\r\n ", fullRecord + fullRecord,
		fullRecord + "\xff", "\xff" + fullRecord,
	}
	for _, rep := range [][2]string{
		{`"Cinnamon Bun"`, `"Cinnamon \"Bun\""`},
		{`"Cinnamon Bun"`, `"Cinnamon\u0020Bun"`},
		{`"Cinnamon Bun"`, "\"Cinnamon \xff Bun\""},
		{`"Cinnamon Bun"`, "\"Cinnamon \x01 Bun\""},
		{`"Cinnamon Bun"`, `"Kanelipulla ä 🍩"`},
		{`"Cinnamon Bun"`, `"Cinnamon\u0000Bun"`},
		{`"Cinnamon Bun"`, `"Cinnamon\ud800Bun"`},
		{`"Cinnamon Bun"`, `"Cinnamon\udc00\ud800Bun"`},
		{`"Cinnamon Bun"`, `"Cinnamon\ud800\u0041Bun"`},
		{`"Cinnamon Bun"`, `"Cinnamon\ud83c\udf69Bun"`},
		{`"Cinnamon Bun"`, `"Cinnamon\\ud800Bun"`},
		{`"Cinnamon Bun"`, `"Cinnamon\ud8"`},
		{`"Cinnamon Bun"`, "\"Cinnamon \xc3\x28 Bun\""},
		{`"Cinnamon Bun"`, "\"Cinnamon \xed\xa0\x80 Bun\""},
		{`"Cinnamon Bun"`, "\"Cinnamon \xc0\xaf Bun\""},
		{`"Cinnamon Bun"`, "\"Cinnamon \xff\xfe\" Bun\""},
		{`"Cinnamon Bun"`, "\"Cinnamon\x00Bun\""},
		{`"orderId":"ord_f30130dc3f0f22cf8889a528"`, `"orderId":"ord\u0000"`},
		{`"orderId":"ord_f30130dc3f0f22cf8889a528"`, "\"orderId\":\"ord\xff\""},
		{`"orderType":"dine_in"`, "\"order\xffType\":\"dine_in\""},
		{`"occurredAt":"2026-07-19T08:33:46.724Z"`, "\"occurredAt\":\"2026-07-19T08:33:46.724Z\xff\""},
		{`"tableNumber":30`, "\"tableNumber\":30\xff"},
		{`"taxEvidence":"legacy"`, `"taxEvidence":"guess"`},
		{`"quantity":1,"unitPriceMinor":520`, `"quantity":-1,"unitPriceMinor":520`},
		{`"quantity":1,"unitPriceMinor":520`, `"quantity":99999999999999999999,"unitPriceMinor":520`},
		{`"quantity":1,"unitPriceMinor":520`, `"quantity":2147483648,"unitPriceMinor":520`},
		{`"name":"Oat Milk","quantity":1`, `"name":"Oat Milk","quantity":-1`},
		{`"netAmountMinor":1647`, `"netAmountMinor":-1647`},
		{`"recordedAmountMinor":1870`, `"recordedAmountMinor":-1870`},
		{`"transactionId":"wo_1"`, `"transactionId":"wo\u0000"`},
		{`"orderType":"dine_in"`, `"ordertype":"dine_in"`},
		{`"orderType":"dine_in"`, `"orderType":"dine_in","orderType":"takeaway"`},
		{`"tableNumber":30`, `"tableNumber":30,"extra":1`},
		{`"tableNumber":30`, `"tableNumber":null`},
		{`"tableNumber":30`, `"tableNumber":"30"`},
		{`"tableNumber":30`, `"tableNumber":30.0`},
		{`"tableNumber":30`, `"tableNumber":3e1`},
		{`"tableNumber":30`, `"tableNumber":030`},
		{`"tableNumber":30`, `"tableNumber":-0`},
		{`"tableNumber":30`, `"tableNumber":-7`},
		{`"tableNumber":30`, `"tableNumber":true`},
		{`"restaurantOrderNumber":9345`, `"restaurantOrderNumber":99999999999999999999`},
		{`"restaurantOrderNumber":9345`, `"restaurantOrderNumber":999999999999999999`},
		{`"restaurantOrderNumber":9345`, `"restaurantOrderNumber":null`},
		{`"totalAmountMinor":1870`, `"totalAmountMinor":-1`},
		{`"orderId":"ord_f30130dc3f0f22cf8889a528"`, `"orderId":null`},
		{`"orderId":"ord_f30130dc3f0f22cf8889a528"`, `"orderId":""`},
		{`"orderOrigin":{"kind":"marketplace","provider":"wolt"}`, `"orderOrigin":null`},
		{`"orderOrigin":{"kind":"marketplace","provider":"wolt"}`, `"orderOrigin":{}`},
		{`"orderOrigin":{"kind":"marketplace","provider":"wolt"}`, `"orderOrigin":{"kind":"pos","provider":null,"x":1}`},
		{`"occurredAt":"2026-07-19T08:33:46.724Z"`, `"occurredAt":null`},
		{`"occurredAt":"2026-07-19T08:33:46.724Z"`, `"occurredAt":"2026-07-19 08:33:46Z"`},
		{`"occurredAt":"2026-07-19T08:33:46.724Z"`, `"occurredAt":"2026-07-19T24:33:46Z"`},
		{`"occurredAt":"2026-07-19T08:33:46.724Z"`, `"occurredAt":1}`},
		{`"taxRatesAsOf":"2026-01-01",`, `"taxRatesAsOf":"2026-1-01",`},
		{`"taxRatesAsOf":"2026-01-01",`, `"taxRatesAsOf":null,`},
		{`"refundedAt":"2026-07-21T10:00:00.123456789+03:00"`, `"refundedAt":null`},
		{`"vatRows":[`, `"vatRows":null,"x":[`},
		{`"selectedOptions":[]`, `"selectedOptions":null`},
		{`"lines":[`, `"lines":null,"y":[`},
		{`"dayStartHour":4`, `"dayStartHour":24`},
		{`"dayStartHour":4`, `"dayStartHour":null`},
		{`"currency":"EUR"`, `"currency":"eur"`},
		{`"status":"partially_refunded"`, `"status":"open"`},
	} {
		cases = append(cases, r(rep[0], rep[1]).Replace(fullRecord))
	}
	// every special byte at every offset of the eight-byte scan
	for _, special := range []string{`\"`, `\\`, "\x01", "\x1f", "\x7f", "é", "\xff"} {
		for at := range 17 {
			name := strings.Repeat("n", at) + special + strings.Repeat("m", 17-at)
			cases = append(cases, strings.Replace(fullRecord, `"Cinnamon Bun"`, `"`+name+`"`, 1))
		}
	}
	return cases
}

// slowParse is the reference: the encoding/json path, then validation.
func slowParse(line string) (Order, error) {
	rec, err := decodeRecord(line)
	if err != nil {
		return Order{}, err
	}
	return rec.Order(map[string]*time.Location{})
}

// plainDecode is encoding/json alone, as the slow path uses it.
func plainDecode(line string) (Record, error) {
	var rec Record
	dec := json.NewDecoder(bytes.NewReader([]byte(line)))
	dec.DisallowUnknownFields()
	return rec, dec.Decode(&rec)
}

func checkFastDecode(t *testing.T, line string) {
	t.Helper()
	var d fastDecoder
	var fast Record
	if d.decode(line, &fast) {
		plain, err := plainDecode(line)
		if err != nil || !reflect.DeepEqual(fast, plain) {
			t.Fatalf("fast decoding differs for %s:\nfast %+v\nslow %+v (%v)", line, fast, plain, err)
		}
		if !json.Valid([]byte(line)) {
			t.Fatalf("fast decoding took a line encoding/json refuses: %s", line)
		}
	}
	slowOrder, slowErr := slowParse(line)
	o, err := parseRecord(line, map[string]*time.Location{}, &d)
	if (err == nil) != (slowErr == nil) || (err != nil && err.Error() != slowErr.Error()) {
		t.Fatalf("error differs for %s: %v, want %v", line, err, slowErr)
	}
	if !reflect.DeepEqual(o, slowOrder) {
		t.Fatalf("order differs for %s:\n%+v\n%+v", line, o, slowOrder)
	}
	if err != nil {
		return
	}
	// What is accepted is one JSON value with text the database can hold.
	if !json.Valid([]byte(line)) || !utf8.ValidString(line) {
		t.Fatalf("accepted a line that is not exactly one valid JSON value: %q", line)
	}
	if s, ok := invalidString(reflect.ValueOf(o)); ok {
		t.Fatalf("accepted text %q that the database cannot hold, from %q", s, line)
	}
}

// invalidString finds a string that is not valid UTF-8 or holds NUL.
func invalidString(v reflect.Value) (string, bool) {
	switch v.Kind() {
	case reflect.String:
		return v.String(), !ValidText(v.String())
	case reflect.Pointer:
		if !v.IsNil() {
			return invalidString(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				if s, bad := invalidString(v.Field(i)); bad {
					return s, true
				}
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			if s, bad := invalidString(v.Index(i)); bad {
				return s, true
			}
		}
	}
	return "", false
}

// The reflection-free decoder accepts the plain records and gives exactly
// what encoding/json gives; anything else goes to encoding/json.
func TestFastDecodeMatchesEncodingJSON(t *testing.T) {
	var d fastDecoder
	var rec Record
	if !d.decode(fullRecord, &rec) {
		t.Fatal("the plain record took the slow path")
	}
	for _, line := range fastJSONCases() {
		checkFastDecode(t, line)
	}
}

func FuzzFastDecode(f *testing.F) {
	for _, line := range fastJSONCases() {
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, line string) { checkFastDecode(t, line) })
}
