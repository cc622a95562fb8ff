package domain

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"

	"partnerapi.dev/pkg/fault"
	"partnerapi.dev/pkg/webhooksig"
)

// EndpointPatch is an update: nil fields stay as they are.
type EndpointPatch struct {
	URL        *string
	EventTypes *[]string
	Disabled   *bool
}

// ErrEndpointDisabled refuses sending to a disabled endpoint.
var ErrEndpointDisabled = fault.New(fault.Conflict, "The endpoint is disabled; enable it (disabled: false) first.")

// NewUUID returns a random (version 4) uuid.
func NewUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

const idChars = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// NewEventID returns a fresh event id (evt_ and 26 characters).
func NewEventID() string {
	b := make([]byte, 26)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = idChars[int(b[i])%len(idChars)]
	}
	return "evt_" + string(b)
}

// CreateEndpoint adds an endpoint for the owner under its grant, with a
// fresh secret; scopes are the grant's.
func CreateEndpoint(tx WebhookTx, o Owner, url string, types, scopes []string, allowLoopbackHTTP bool, now time.Time) (Endpoint, error) {
	if err := CheckEndpointURL(url, allowLoopbackHTTP); err != nil {
		return Endpoint{}, err
	}
	types, err := CheckEventTypes(types, scopes)
	if err != nil {
		return Endpoint{}, err
	}
	n, err := tx.CountEndpoints(o)
	if err != nil {
		return Endpoint{}, err
	}
	if n >= MaxEndpointsPerRestaurant {
		return Endpoint{}, fault.New(fault.Conflict, "This restaurant has the most endpoints allowed (20) for your application; delete one first.")
	}
	e := Endpoint{ID: NewUUID(), RestaurantID: o.RestaurantID, ClientID: o.ClientID, GrantID: o.GrantID, URL: url,
		EventTypes: types, Secret: webhooksig.NewSecret(), CreatedAt: now, UpdatedAt: now}
	return e, tx.CreateEndpoint(e)
}

// UpdateEndpoint applies p. The endpoint is bound to the grant making the
// change (so an owner's new approval brings a blocked endpoint back);
// enabling it again clears why it was disabled and its failing clock.
func UpdateEndpoint(tx WebhookTx, o Owner, id string, p EndpointPatch, scopes []string, allowLoopbackHTTP bool, now time.Time) (Endpoint, error) {
	e, err := tx.ChangeEndpoint(o, id)
	if err != nil {
		return Endpoint{}, err
	}
	if p.URL != nil {
		if err := CheckEndpointURL(*p.URL, allowLoopbackHTTP); err != nil {
			return Endpoint{}, err
		}
		e.URL = *p.URL
	}
	types := e.EventTypes
	if p.EventTypes != nil {
		types = *p.EventTypes
	}
	// The kept types are checked too: the grant making the change must be
	// able to read every type it leaves subscribed.
	if e.EventTypes, err = CheckEventTypes(types, scopes); err != nil {
		return Endpoint{}, err
	}
	if p.Disabled != nil {
		if e.Disabled && !*p.Disabled {
			e.DisabledReason, e.FailingSince = "", nil
		}
		e.Disabled = *p.Disabled
		if e.Disabled {
			e.DisabledReason = ""
		}
	}
	e.GrantID, e.UpdatedAt = o.GrantID, now
	return e, tx.SaveEndpoint(e)
}

// DeleteEndpoint removes the endpoint and its deliveries.
func DeleteEndpoint(tx WebhookTx, o Owner, id string) error {
	if _, err := tx.ChangeEndpoint(o, id); err != nil {
		return err
	}
	return tx.DeleteEndpoint(o, id)
}

// RotateSecret gives the endpoint a new secret; the current one keeps
// signing beside it for grace (a secret still in its grace period from an
// earlier rotation stops now).
func RotateSecret(tx WebhookTx, o Owner, id string, grace time.Duration, now time.Time) (Endpoint, error) {
	if grace < 0 || grace > MaxRotationGrace {
		return Endpoint{}, invalid("gracePeriodSeconds must be from 0 to %d.", int(MaxRotationGrace/time.Second))
	}
	e, err := tx.ChangeEndpoint(o, id)
	if err != nil {
		return Endpoint{}, err
	}
	e.PreviousSecret, e.PreviousUntil = e.Secret, now.Add(grace)
	e.Secret, e.UpdatedAt = webhooksig.NewSecret(), now
	return e, tx.SaveEndpoint(e)
}

// SendTestEvent queues a webhook.test event (seq 0) to the endpoint.
func SendTestEvent(tx WebhookTx, o Owner, id string, now time.Time) (Delivery, error) {
	e, err := tx.LockEndpoint(o, id)
	if err != nil {
		return Delivery{}, err
	}
	if e.Disabled {
		return Delivery{}, ErrEndpointDisabled
	}
	data, _ := json.Marshal(map[string]string{"endpointId": e.ID, "message": "A test event: verify its signature and answer 2xx."})
	return tx.EnqueueTest(e, Event{ID: NewEventID(), Type: TestEventType, RestaurantID: e.RestaurantID, OccurredAt: now, Data: data}, now)
}

// RetryDelivery sends one delivery again now.
func RetryDelivery(tx WebhookTx, o Owner, id string, deliveryID int64, now time.Time) (Delivery, error) {
	e, err := tx.LockEndpoint(o, id)
	if err != nil {
		return Delivery{}, err
	}
	if e.Disabled {
		return Delivery{}, ErrEndpointDisabled
	}
	return tx.RetryDelivery(e, deliveryID, now)
}

// Replay queues the kept events from f again for the endpoint, at most
// MaxReplay per call.
func Replay(tx WebhookTx, o Owner, id string, f ReplayFrom, now time.Time) (ReplayResult, error) {
	if f.AfterSeq < 0 {
		return ReplayResult{}, invalid("afterSeq must be 0 or more.")
	}
	if !f.Since.IsZero() && (f.Since.After(now) || f.Since.Before(now.Add(-Retention))) {
		return ReplayResult{}, invalid("since must be within the last 30 days.")
	}
	e, err := tx.LockEndpoint(o, id)
	if err != nil {
		return ReplayResult{}, err
	}
	if e.Disabled {
		return ReplayResult{}, ErrEndpointDisabled
	}
	return tx.Replay(e, f, now)
}
