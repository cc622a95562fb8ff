package domain

import "partnerapi.dev/services/contracts"

// Change is what storing an order did to the stored order. An order stored
// again unchanged has no Change.
type Change int

// The changes a Replace reports.
const (
	// Created: the order was not stored before.
	Created Change = iota + 1
	// RefundGrew: the stored order's refund amount grew.
	RefundGrew
	// Modified: any other difference from the stored order (its status,
	// totals, counts or item names).
	Modified
)

// Event is an event recorded in the transaction that stores the change it
// reports, for the event feed and webhooks.
type Event struct {
	Type         string
	RestaurantID string
	Data         any
}

// Decide gives the event a change records. Replace calls it inside its
// transaction, once it knows what changed; a nil Decide records no events
// (an initial load: the feed starts from the loaded state).
type Decide func(o Order, c Change) Event

// OrderEvents decides the order events: order.created for a new order,
// order.refunded when the refund amount grew, order.updated for any other
// change. The data is View of the order with its first SearchLineCap lines,
// as search shows it.
type OrderEvents struct {
	View func(Order) any
}

// Decide is the Decide of these events.
func (e OrderEvents) Decide(o Order, c Change) Event {
	t := contracts.EventOrderUpdated
	switch c {
	case Created:
		t = contracts.EventOrderCreated
	case RefundGrew:
		t = contracts.EventOrderRefunded
	}
	if len(o.Lines) > SearchLineCap {
		o.Lines = o.Lines[:SearchLineCap]
	}
	return Event{Type: t, RestaurantID: o.RestaurantID, Data: e.View(o)}
}
