package domain

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Every record rule answers with the line and the path of the field, and the
// HTTP ingestion (one transaction) and the import (batches) refuse the same
// lines with the same message, storing nothing of an all-or-nothing stream.
func TestRecordRules(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	cases := []struct{ from, to, want string }{
		// trailing data after the object
		{`"createdAt":"2026-07-19T08:34:43.724Z"}]}`, `"createdAt":"2026-07-19T08:34:43.724Z"}]} {"orderId":"x"}`, "unexpected data after the JSON object (at byte"},
		{`"createdAt":"2026-07-19T08:34:43.724Z"}]}`, `"createdAt":"2026-07-19T08:34:43.724Z"}]}x`, "unexpected data after the JSON object (at byte"},
		{`"taxEvidence":"legacy"`, `"taxEvidence":"guess"`, "lines[1].taxEvidence: must be one of snapshot, legacy, unknown"},
		{`"name":"Cinnamon Bun"`, "\"name\":\"Cinnamon \xff Bun\"", "lines[1].name: must be valid UTF-8 text without NUL characters"},
		{`"name":"Cinnamon Bun"`, "\"name\":\"Cinnamon \xc3\x28 Bun\"", "lines[1].name: must be valid UTF-8"},
		{`"name":"Cinnamon Bun"`, "\"name\":\"Cinnamon \xed\xa0\x80 Bun\"", "lines[1].name: must be valid UTF-8"},
		{`"name":"Cinnamon Bun"`, "\"name\":\"Cinnamon \xc0\xaf Bun\"", "lines[1].name: must be valid UTF-8"},
		{`"name":"Cinnamon Bun"`, `"name":"Cinnamon \ud800 Bun"`, "lines[1].name: must be valid UTF-8"},
		{`"name":"Cinnamon Bun"`, `"name":"Cinnamon \u0000 Bun"`, "lines[1].name: must be valid UTF-8 text without NUL characters"},
		{`"orderId":"ord_f30130dc3f0f22cf8889a528"`, `"orderId":"ord\u0000"`, "orderId: must be valid UTF-8"},
		{`"receiptHash":"362b9c5d"`, `"receiptHash":"\u0000"`, "receiptHash: must be valid UTF-8"},
		{`"provider":"wolt"}`, `"provider":"wo\u0000lt"}`, "orderOrigin.provider: must be a lower-case key"},
		{`"Oat Milk"`, `"Oat\u0000Milk"`, "lines[0].selectedOptions[0].name: must be valid UTF-8"},
		{`"transactionId":"wo_1"`, `"transactionId":"wo\u0000"`, "paymentReferences[0].transactionId: must be valid UTF-8"},
		{`"menuId":"25315df2"`, `"menuId":"\u0000"`, "lines[0].menuId: must be valid UTF-8"},
		{`"lineId":"e4306f16","catalogItemId":null`, `"lineId":"e\u0000","catalogItemId":null`, "refundedItems[0].lineId: must be valid UTF-8"},
		// negative nested numbers
		{`"quantity":1,"unitPriceMinor":520`, `"quantity":-1,"unitPriceMinor":520`, "lines[0].quantity: must be ≥ 0"},
		{`"unitPriceMinor":520`, `"unitPriceMinor":-520`, "lines[0].unitPriceMinor: must be ≥ 0"},
		{`"originalUnitPriceMinor":650`, `"originalUnitPriceMinor":-650`, "lines[0].originalUnitPriceMinor: must be ≥ 0"},
		{`"grossAmountMinor":520`, `"grossAmountMinor":-520`, "lines[0].grossAmountMinor: must be ≥ 0"},
		{`"grossAmountMinor":900,"discountAmountMinor":0`, `"grossAmountMinor":900,"discountAmountMinor":-1`, "lines[1].discountAmountMinor: must be ≥ 0"},
		{`"vatAmountMinor":62,"taxEvidence"`, `"vatAmountMinor":-62,"taxEvidence"`, "lines[0].vatAmountMinor: must be ≥ 0"},
		{`"rateBps":1350,"vatAmountMinor":62}`, `"rateBps":1350,"vatAmountMinor":-62}`, "lines[0].vatRates[0].vatAmountMinor: must be ≥ 0"},
		{`"rateBps":1350,"vatAmountMinor":62}`, `"rateBps":10001,"vatAmountMinor":62}`, "lines[0].vatRates[0].rateBps: must be ≤ 10000"},
		{`"vatRates":[{"category":"reduced"`, `"vatRates":[{"category":"luxury"`, "lines[0].vatRates[0].category: must be one of zero, special, reduced, standard, unknown"},
		{`"name":"Oat Milk","quantity":1`, `"name":"Oat Milk","quantity":-1`, "lines[0].selectedOptions[0].quantity: must be ≥ 0"},
		{`"unitPriceMinor":50,`, `"unitPriceMinor":-50,`, "lines[0].selectedOptions[0].unitPriceMinor: must be ≥ 0"},
		{`"grossAmountMinor":50,"vatAmountMinor":6`, `"grossAmountMinor":50,"vatAmountMinor":-6`, "lines[0].selectedOptions[0].vatAmountMinor: must be ≥ 0"},
		{`"grossAmountMinor":1870,"netAmountMinor"`, `"grossAmountMinor":-1870,"netAmountMinor"`, "vatRows[0].grossAmountMinor: must be ≥ 0"},
		{`"netAmountMinor":1647`, `"netAmountMinor":-1647`, "vatRows[0].netAmountMinor: must be ≥ 0"},
		{`"netAmountMinor":1647,"vatAmountMinor":223`, `"netAmountMinor":1647,"vatAmountMinor":-223`, "vatRows[0].vatAmountMinor: must be ≥ 0"},
		{`"vatRows":[{"category":"reduced"`, `"vatRows":[{"category":"Reduced"`, "vatRows[0].category: must be one of"},
		{`"quantity":1,"amountMinor":520`, `"quantity":-1,"amountMinor":520`, "refundedItems[0].quantity: must be ≥ 0"},
		{`"amountMinor":520`, `"amountMinor":-520`, "refundedItems[0].amountMinor: must be ≥ 0"},
		{`"recordedAmountMinor":1870`, `"recordedAmountMinor":-1870`, "paymentReferences[0].recordedAmountMinor: must be ≥ 0"},
		{`"totalAmountMinor":1870`, `"totalAmountMinor":-1`, "totalAmountMinor: must be ≥ 0"},
		// integers beyond their columns
		{`"quantity":1,"unitPriceMinor":520`, `"quantity":2147483648,"unitPriceMinor":520`, "lines[0].quantity: must be ≤ 2147483647"},
		{`"tableNumber":30`, `"tableNumber":2147483648`, "tableNumber: must be ≤ 2147483647"},
		{`"tableNumber":30`, `"tableNumber":99999999999999999999`, "tableNumber: must be an integer from"},
		// enums, codes, lengths, ids, dates
		{`"kind":"marketplace"`, `"kind":"spaceship"`, "orderOrigin.kind: must be one of pos, online, marketplace"},
		{`"vatAllocationMethod":"stored"`, `"vatAllocationMethod":"guessed"`, "vatAllocationMethod: must be one of stored"},
		{`"status":"partially_refunded"`, `"status":"open"`, "status: must be one of paid, partially_refunded, refunded, voided"},
		{`"restaurantId":"29db7f54-6f7c-48ea-964c-b99e91c78552"`, `"restaurantId":"29db7f54"`, "restaurantId: must be a UUID"},
		{`"timeZone":"Europe/Helsinki"`, `"timeZone":"Local"`, "timeZone: \"Local\" is not a known IANA time-zone name"},
		{`"dayStartHour":4`, `"dayStartHour":24`, "dayStartHour: must be ≤ 23"},
		{`"receiptHash":"362b9c5d"`, `"receiptHash":"` + long(256) + `"`, "receiptHash: must be 1 to 255 characters"},
		{`"lineId":"e4306f16","catalogItemId":"a8d6aa8a"`, `"lineId":"` + long(256) + `","catalogItemId":"a8d6aa8a"`, "lines[0].lineId: must be 1 to 255 characters"},
		{`"catalogItemId":"a8d6aa8a"`, `"catalogItemId":""`, "lines[0].catalogItemId: must be 1 to 255 characters"},
		{`"name":"Cinnamon Bun"`, `"name":"` + long(501) + `"`, "lines[1].name: must be 1 to 500 characters"},
		{`"provider":"wolt","receiptHash"`, `"provider":"","receiptHash"`, "paymentReferences[0].provider: must be a lower-case key"},
		{`"currency":"EUR","createdAt"`, `"currency":"eur","createdAt"`, "paymentReferences[0].currency: must be 3 upper-case letters"},
		{`"occurredAt":"2026-07-19T08:33:46.724Z"`, `"occurredAt":"1969-12-31T23:59:59Z"`, "occurredAt: must be from 1970-01-01T00:00:00Z"},
		{`"occurredAt":"2026-07-19T08:33:46.724Z"`, `"occurredAt":"9999-12-31T10:00:00-05:00"`, "occurredAt: must be from 1970-01-01T00:00:00Z to before 9999-12-31T00:00:00Z"},
		{`"taxRatesAsOf":"2026-01-01","lines"`, `"taxRatesAsOf":"0001-01-01","lines"`, "taxRatesAsOf: must be from 1970-01-01 to 9999-12-31"},
		// The calendar has no year 0: not a date at all.
		{`"taxRatesAsOf":"2026-01-01","lines"`, `"taxRatesAsOf":"0000-01-01","lines"`, `a value is malformed: "0000-01-01" is not a YYYY-MM-DD date`},
		{`"taxCountryCode":"FI","taxRatesAsOf":"2026-01-01","vatRates"`, `"taxCountryCode":"FI","taxRatesAsOf":"1066-10-14","vatRates"`, "lines[0].taxRatesAsOf: must be from 1970-01-01"},
		{`"refundedAt":"2026-07-21T10:00:00.123456789+03:00"`, `"refundedAt":"0001-01-01T00:00:00Z"`, "refundedItems[0].refundedAt: is required"},
		{`"createdAt":"2026-07-19T08:34:43.724Z"`, `"createdAt":"1900-01-01T00:00:00Z"`, "paymentReferences[0].createdAt: must be from 1970"},
	}
	good := strings.Replace(fullRecord, "ord_f30130dc3f0f22cf8889a528", "ord_good", 1)
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			bad := strings.Replace(fullRecord, c.from, c.to, 1)
			if bad == fullRecord {
				t.Fatalf("%s is not in the record", c.from)
			}
			var messages []string
			for _, batch := range []int{0, 2, 1} {
				repo := &memRepo{}
				_, err := Ingestion{Repo: repo, BatchSize: batch}.Ingest(context.Background(), strings.NewReader(good+"\n\n"+bad+"\n"+good), nil)
				var inv *InvalidError
				if !errors.As(err, &inv) || !strings.HasPrefix(inv.Message, "line 3: "+c.want) {
					t.Fatalf("batch %d: got %v, want line 3: %s", batch, err, c.want)
				}
				if batch == 0 && len(repo.batches) != 0 {
					t.Fatal("a stream with a bad line stored something")
				}
				messages = append(messages, inv.Message)
			}
			if messages[0] != messages[1] || messages[1] != messages[2] {
				t.Fatalf("the ingestion and the import differ: %q", messages)
			}
		})
	}
	// the full record is valid as it is
	if _, err := ParseRecord([]byte(fullRecord), nil); err != nil {
		t.Fatal(err)
	}
}
