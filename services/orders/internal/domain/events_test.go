package domain

import (
	"fmt"
	"testing"

	"partnerapi.dev/services/contracts"
)

// Each change records its event type, with the order as search shows it:
// at most SearchLineCap lines.
func TestOrderEventsDecide(t *testing.T) {
	o := Order{RestaurantID: "r", OrderID: "o"}
	for i := range SearchLineCap + 3 {
		o.Lines = append(o.Lines, Line{LineID: fmt.Sprint(i)})
	}
	events := OrderEvents{View: func(o Order) any { return len(o.Lines) }}
	for c, want := range map[Change]string{
		Created:    contracts.EventOrderCreated,
		RefundGrew: contracts.EventOrderRefunded,
		Modified:   contracts.EventOrderUpdated,
	} {
		e := events.Decide(o, c)
		if e.Type != want || e.RestaurantID != "r" || e.Data != SearchLineCap {
			t.Errorf("change %d: got %+v, want %s for r with %d lines", c, e, want, SearchLineCap)
		}
	}
	if len(o.Lines) != SearchLineCap+3 {
		t.Errorf("Decide changed the caller's order: %d lines", len(o.Lines))
	}
}
