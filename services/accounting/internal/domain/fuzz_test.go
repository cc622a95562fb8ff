package domain

import (
	"strings"
	"testing"

	"partnerapi.dev/pkg/fault"
)

// FuzzParseBatch: any body is either a batch or an invalid-request error
// naming a line; it never panics.
func FuzzParseBatch(f *testing.F) {
	f.Add(`{"type":"payment_source","restaurantId":"0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a01","timeZone":"Europe/Helsinki","dayStartHour":4,"currency":"EUR","paymentSource":{"sourceKind":"order","sourceRecordId":"o","receiptHash":"r","orderIds":["o"],"occurredAt":"2026-07-01T10:00:00Z","methodKey":"card","grossMinor":100,"vatMinor":10,"transactionCount":1,"vatEvidence":"known","grossByRateMinor":{"zero":0,"special":0,"reduced":0,"standard":100,"unknown":0},"vatByRateMinor":{"zero":0,"special":0,"reduced":0,"standard":10,"unknown":0},"discountMinor":0,"tipMinor":0}}`)
	f.Add(`{"type":"refund_event","restaurantId":"0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a01","timeZone":"Europe/Helsinki","dayStartHour":4,"currency":"EUR","refundEvent":{"refundId":"r","kind":"refund","occurredAt":"2026-07-01T10:00:00Z","orderId":null,"methodKey":"card","amountMinor":5,"returnedLines":[],"accountingImpact":null,"legacyTiming":false}}`)
	f.Add("{}\n\n[1]")
	f.Fuzz(func(t *testing.T, body string) {
		b, err := ParseBatch(strings.NewReader(body))
		if err != nil {
			if k, _ := fault.Of(err); k != fault.Invalid || !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("error %v of kind %v", err, k)
			}
			return
		}
		for _, s := range b.Sources {
			a := s.Source.Amounts
			if a.GrossByRate.Sum() != a.Gross || a.VatByRate.Sum() != a.Vat || a.Vat > a.Gross || a.Vat < 0 {
				t.Fatalf("accepted a source that breaks the rules: %+v", s)
			}
		}
	})
}
