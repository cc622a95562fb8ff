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
	// EventAuthorizationRevoked tells a partner that an owner, an operator
	// or the partner itself ended one of its authorizations (data:
	// AuthorizationRevoked). Only that partner sees it, in the feed and as
	// the last webhook delivery of the authorization's endpoints, whatever
	// their eventTypes; it cannot be subscribed to.
	EventAuthorizationRevoked = "authorization.revoked"
)

// AuthorizationRevoked is the data of an authorization.revoked event.
type AuthorizationRevoked struct {
	// AuthorizationID is the revoked grant, ClientID its partner client.
	AuthorizationID string    `json:"authorizationId"`
	ClientID        string    `json:"clientId"`
	RevokedAt       time.Time `json:"revokedAt"`
	// RevokedBy is who ended it: RevokedByOwner, RevokedByOperator or
	// RevokedByPartner.
	RevokedBy string `json:"revokedBy"`
}

// Who revoked an authorization.
const (
	RevokedByOwner    = "owner"
	RevokedByOperator = "operator"
	RevokedByPartner  = "partner"
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
	EventAuthorizationRevoked:     {ScopeRestaurantRead},
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
	// Actor is the authorization of the partner request that made the
	// change (none for other changes). The events service keeps it for the
	// owners' connected-apps page and never shows it to partners.
	Actor *EventActor `json:"actor,omitempty"`
}

// EventActor names who made a change: the partner client, the owner's
// grant it acted under and the user who approved that grant.
type EventActor struct {
	ClientID string `json:"clientId"`
	GrantID  string `json:"grantId"`
	UserID   string `json:"userId"`
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

// ConnectedAppsPath takes a ConnectedAppsQuery (POST, signed internal
// context) and answers a ConnectedAppsActivity: what partner clients did
// under their grants on some restaurants, for the owners' connected-apps
// page, in one question per page.
const ConnectedAppsPath = "/internal/v1/connected-apps"

// Bounds of one ConnectedAppsQuery: the restaurants and the apps (a page
// lists at most 200).
const (
	MaxConnectedAppRestaurants = 5_000
	MaxConnectedApps           = 200
)

// ConnectedAppsQuery asks, for each app, for its grant's recent events and
// its client's webhook endpoints on the given restaurants.
type ConnectedAppsQuery struct {
	Apps          []ConnectedAppRef `json:"apps"`
	RestaurantIDs []string          `json:"restaurantIds"`
	// Limit bounds the events of each app (1 to 100).
	Limit int `json:"limit"`
}

// ConnectedAppRef is one app of a ConnectedAppsQuery: a grant and its
// client.
type ConnectedAppRef struct {
	ClientID string `json:"clientId"`
	GrantID  string `json:"grantId"`
}

// ConnectedAppsActivity answers a ConnectedAppsQuery: one entry per app
// asked, in the order asked.
type ConnectedAppsActivity struct {
	Apps []ConnectedAppActivity `json:"apps"`
}

// ConnectedAppActivity is what one app did.
type ConnectedAppActivity struct {
	GrantID string `json:"grantId"`
	// Events are the grant's events, newest first, with their data as the
	// service recorded it (menu naming set A).
	Events []ActivityEvent `json:"events"`
	// WebhookHosts are the hosts of the client's endpoints on the
	// restaurants (never the whole address, which may carry a secret).
	WebhookHosts []WebhookHost `json:"webhookHosts"`
}

// ActivityEvent is one event a grant's request made.
type ActivityEvent struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	RestaurantID string          `json:"restaurantId"`
	OccurredAt   time.Time       `json:"occurredAt"`
	UserID       string          `json:"userId"`
	Data         json.RawMessage `json:"data"`
}

// WebhookHost is the host of one webhook endpoint.
type WebhookHost struct {
	Host         string `json:"host"`
	RestaurantID string `json:"restaurantId"`
	Disabled     bool   `json:"disabled"`
}
