package api

import (
	"encoding/json"
	"strings"
	"testing"

	"partnerapi.dev/services/orders/internal/domain"
)

func TestPaymentReferencesNullWhenUnreadable(t *testing.T) {
	o := domain.Order{OrderID: "a", PaymentReferencesUnavailable: true}
	raw, _ := json.Marshal(details(o))
	if !strings.Contains(string(raw), `"paymentReferences":null`) {
		t.Fatalf("unreadable references: %s", raw)
	}
	o = domain.Order{OrderID: "a", PaymentReferences: []domain.PaymentReference{}}
	raw, _ = json.Marshal(details(o))
	if !strings.Contains(string(raw), `"paymentReferences":{"payments":[],"truncated":false}`) ||
		!strings.Contains(string(raw), `"refundedItems":[]`) || !strings.Contains(string(raw), `"rows":[]`) {
		t.Fatalf("no references retained: %s", raw)
	}
	o = domain.Order{OrderID: "a", LineCount: 30, Lines: make([]domain.Line, 20), RefundedItemCount: 51,
		RefundedItems: make([]domain.RefundedItem, 50), PaymentReferenceCount: 21, PaymentReferences: make([]domain.PaymentReference, 20)}
	d := details(o)
	if !d.ItemsTruncated || !d.RefundedItemsTruncated || !d.PaymentReferences.Truncated {
		t.Fatalf("truncation flags: %+v", d)
	}
}
