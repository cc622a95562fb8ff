package contracts

import (
	"encoding/json"
	"time"
)

// Every service records its events in an outbox in its own schema, in the
// transaction of the change, and a relay forwards them, in the order they
// committed, to the events service: the single writer that numbers each
// restaurant's events 1, 2, 3 … (docs/events.md).

// EventsAppendPath takes an EventAppend (POST, bearer EVENTS_TOKEN) and
// answers an EventAppendResult. Appending an event id already appended
// changes nothing, so a relay may resend after any failure.
const EventsAppendPath = "/internal/v1/events/append"

// Event types.
const (
	EventOrderCreated             = "order.created"
	EventOrderUpdated             = "order.updated"
	EventOrderRefunded            = "order.refunded"
	EventRefundRecorded           = "refund_event.recorded"
	EventPaymentCorrectionApplied = "payment_correction.applied"
	EventPaymentCorrectionUndone  = "payment_correction.undone"
	EventMenuCreated              = "menu.created"
	EventMenuUpdated              = "menu.updated"
	EventMenuPublished            = "menu.published"
	EventCatalogImportApplied     = "catalog_import.applied"
)

// EventScopes gives, for each event type, the scopes a grant needs to see
// it: the scopes of the operation that reads the resource it describes.
var EventScopes = map[string][]string{
	EventOrderCreated:             {ScopeRestaurantRead, ScopeOrdersRead},
	EventOrderUpdated:             {ScopeRestaurantRead, ScopeOrdersRead},
	EventOrderRefunded:            {ScopeRestaurantRead, ScopeOrdersRead},
	EventRefundRecorded:           {ScopeRestaurantRead, ScopeOrdersRead, ScopeAccountingRead},
	EventPaymentCorrectionApplied: {ScopeRestaurantRead, ScopeAccountingRead, ScopeAnalyticsRead, ScopeCorrectionsWrite},
	EventPaymentCorrectionUndone:  {ScopeRestaurantRead, ScopeAccountingRead, ScopeAnalyticsRead, ScopeCorrectionsWrite},
	EventMenuCreated:              {ScopeRestaurantRead, ScopeMenuRead},
	EventMenuUpdated:              {ScopeRestaurantRead, ScopeMenuRead},
	EventMenuPublished:            {ScopeRestaurantRead, ScopeMenuRead},
	EventCatalogImportApplied:     {ScopeRestaurantRead, ScopeMenuRead, ScopeCatalogImport},
}

// EventRecord is one event as its service recorded it, before it has a
// number.
type EventRecord struct {
	// ID is unique across the system (evt_ and 26 characters); it is the
	// webhook-id of every delivery of the event.
	ID           string `json:"id"`
	Type         string `json:"type"`
	RestaurantID string `json:"restaurantId"`
	// OccurredAt is when the change committed in its service.
	OccurredAt time.Time       `json:"occurredAt"`
	Data       json.RawMessage `json:"data"`
}

// EventAppend is one relay call: events of one service, in commit order.
type EventAppend struct {
	Source string        `json:"source"`
	Events []EventRecord `json:"events"`
}

// EventAppendResult tells how many events were new; the others had been
// appended before.
type EventAppendResult struct {
	Appended   int `json:"appended"`
	Duplicates int `json:"duplicates"`
}
