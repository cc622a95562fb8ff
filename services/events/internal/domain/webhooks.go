package domain

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"partnerapi.dev/pkg/fault"
	"partnerapi.dev/services/contracts"
)

// Webhook bounds and the delivery schedule.
const (
	MaxEndpointsPerRestaurant = 20
	MaxURLLength              = 2048
	// RotationGrace is how long a replaced secret keeps signing by default.
	RotationGrace    = 24 * time.Hour
	MaxRotationGrace = 7 * 24 * time.Hour
	// DeliveryTimeout bounds one attempt: the receiver answers 2xx within it.
	DeliveryTimeout = 15 * time.Second
	// DisableAfter is how long an endpoint may fail every attempt before it
	// is disabled.
	DisableAfter = 5 * 24 * time.Hour
	// MaxReplay bounds the events one replay call enqueues; the answer says
	// where to continue.
	MaxReplay = 10_000
	// TestEventType is the type of the event "send a test event" delivers;
	// its seq is 0, so a partner applying only greater seqs ignores it.
	TestEventType = "webhook.test"
)

// RetrySchedule is the wait before each attempt after the first (which is
// immediate): attempt n+1 waits RetrySchedule[n-1] after attempt n failed.
// Ten attempts in all over about three and a half days.
var RetrySchedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
	5 * time.Hour, 10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}

// Delivery statuses.
const (
	StatusPending   = "pending"
	StatusSucceeded = "succeeded"
	// StatusFailed: every attempt failed, the receiver answered 410, or the
	// endpoint was disabled before it succeeded.
	StatusFailed = "failed"
	// StatusBlocked: the grant no longer lets the partner see the event
	// (revoked, expired, restaurant not covered, scope missing).
	StatusBlocked = "blocked"
)

// Endpoint is one partner's webhook endpoint for one restaurant, created
// under a grant: deliveries are checked against that grant's current state.
type Endpoint struct {
	ID           string
	RestaurantID string
	ClientID     string
	GrantID      string
	URL          string
	EventTypes   []string
	Disabled     bool
	// DisabledReason says why the service disabled it (empty when the
	// partner did or it is enabled).
	DisabledReason string
	Secret         string
	// PreviousSecret keeps signing until PreviousUntil after a rotation.
	PreviousSecret string
	PreviousUntil  time.Time
	// FailingSince is the first failed attempt since the last success.
	FailingSince *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Secrets are the secrets that sign a delivery at now: the current one,
// and the previous one during its grace period.
func (e Endpoint) Secrets(now time.Time) []string {
	s := []string{e.Secret}
	if e.PreviousSecret != "" && now.Before(e.PreviousUntil) {
		s = append(s, e.PreviousSecret)
	}
	return s
}

// Owner is who manages endpoints: a partner client for one restaurant.
type Owner struct {
	ClientID     string
	RestaurantID string
	GrantID      string
}

// Delivery is one event to send to one endpoint, with its attempts.
type Delivery struct {
	ID            int64
	EndpointID    string
	EventID       string
	EventType     string
	Seq           int64
	Status        string
	Attempts      int
	NextAttemptAt *time.Time
	LastAttemptAt *time.Time
	LastStatus    int
	LastError     string
	LatencyMS     int
	CreatedAt     time.Time
}

// Job is a delivery claimed for one attempt, with what it needs.
type Job struct {
	Delivery
	Endpoint Endpoint
	// Event is what is sent; for a test event it is built at enqueue time.
	Event Event
}

// Outcome is what one attempt ended with.
type Outcome struct {
	Status  string // new status of the delivery
	Next    time.Time
	Code    int
	Error   string
	Latency time.Duration
	// Success resets the endpoint's failing clock; DisableEndpoint
	// disables it with the reason.
	Success         bool
	Failure         bool
	DisableEndpoint string
}

// ReplayFrom selects where a replay starts: after a seq, or at a time.
type ReplayFrom struct {
	AfterSeq int64
	Since    time.Time
}

// ReplayResult says what a replay enqueued and where to continue.
type ReplayResult struct {
	Enqueued int
	// LastSeq is the last event enqueued; HasMore says a next call from
	// afterSeq=LastSeq has more to send.
	LastSeq int64
	HasMore bool
}

// WebhookTx is the webhook storage inside one write's transaction.
type WebhookTx interface {
	CountEndpoints(o Owner) (int, error)
	CreateEndpoint(e Endpoint) error
	// LockEndpoint reads the owner's endpoint for update, or ErrNotFound.
	LockEndpoint(o Owner, id string) (Endpoint, error)
	SaveEndpoint(e Endpoint) error
	DeleteEndpoint(o Owner, id string) error
	EnqueueTest(e Endpoint, ev Event, now time.Time) (Delivery, error)
	// RetryDelivery makes a finished delivery pending now, or ErrNotFound.
	RetryDelivery(e Endpoint, deliveryID int64, now time.Time) (Delivery, error)
	Replay(e Endpoint, from ReplayFrom, now time.Time) (ReplayResult, error)
}

// WriteKey identifies an idempotent write.
type WriteKey struct {
	Scope string
	Key   string
	Body  any
}

// Answer is what a write answers, stored with its key.
type Answer struct {
	Status   int
	Data     []byte
	Replayed bool
}

// ErrNotFound is an unknown endpoint or delivery (or one of another owner).
var ErrNotFound = fault.New(fault.NotFound, "Not found.")

// ErrKeyReused is an idempotency key repeated with another body.
var ErrKeyReused = fault.New(fault.Conflict, "This idempotencyKey was already used with a different request; use a new key for a new request.")

// WebhookRepository keeps endpoints and deliveries.
type WebhookRepository interface {
	WriteWebhooks(ctx context.Context, key WriteKey, fn func(tx WebhookTx) (int, any, error)) (Answer, error)
	Endpoints(ctx context.Context, o Owner) ([]Endpoint, error)
	Endpoint(ctx context.Context, o Owner, id string) (Endpoint, error)
	// Deliveries lists an endpoint's deliveries, newest first, below
	// beforeID (0: from the newest).
	Deliveries(ctx context.Context, endpointID string, beforeID int64, limit int) ([]Delivery, error)
	// Claim leases up to n due deliveries until now+lease.
	Claim(ctx context.Context, now time.Time, lease time.Duration, n int) ([]Job, error)
	// Finish records an attempt's outcome.
	Finish(ctx context.Context, j Job, o Outcome, now time.Time) error
}

// CheckEndpointURL refuses a URL that is not absolute https (http is
// accepted on loopback hosts when allowLoopbackHTTP, a test setting).
func CheckEndpointURL(raw string, allowLoopbackHTTP bool) error {
	if raw == "" || len(raw) > MaxURLLength {
		return invalid("url is required, at most %d characters.", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" {
		return invalid("url must be an absolute https URL without credentials or fragment, e.g. https://example.com/webhooks.")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowLoopbackHTTP && isLoopbackHost(u.Hostname()):
	default:
		return invalid("url must start with https://.")
	}
	return nil
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// CheckEventTypes refuses an empty or unknown list and types the grant's
// scopes cannot read; it answers the list sorted without repeats.
func CheckEventTypes(types []string, scopes []string) ([]string, error) {
	if len(types) == 0 || len(types) > len(contracts.EventScopes) {
		return nil, invalid("eventTypes must list 1 to %d event types.", len(contracts.EventScopes))
	}
	out := slices.Clone(types)
	slices.Sort(out)
	out = slices.Compact(out)
	for _, t := range out {
		if _, ok := contracts.EventScopes[t]; !ok {
			return nil, invalid("eventTypes: %q is not an event type.", t)
		}
		if !Visible(t, scopes) {
			return nil, invalid("eventTypes: %q needs scopes %s, which this authorization does not have.", t, strings.Join(contracts.EventScopes[t], ", "))
		}
	}
	return out, nil
}

// NextAttempt is when the attempt after the attempts-th failed one runs, or
// false when attempts were the last. The wait is the schedule's with up to
// ±10% jitter (rnd in [0,1)), and at least retryAfter (the receiver's
// Retry-After, bounded by the longest wait of the schedule).
func NextAttempt(now time.Time, attempts int, retryAfter time.Duration, rnd float64) (time.Time, bool) {
	if attempts < 1 || attempts > len(RetrySchedule) {
		return time.Time{}, false
	}
	base := RetrySchedule[attempts-1]
	wait := base + time.Duration((rnd*0.2-0.1)*float64(base))
	last := RetrySchedule[len(RetrySchedule)-1]
	wait = max(wait, min(retryAfter, last))
	return now.Add(wait), true
}

// ParseRetryAfter reads a Retry-After header: seconds or an HTTP date.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// Attempt is what happened when a delivery was sent.
type Attempt struct {
	Code       int // 0: no answer
	Err        string
	RetryAfter string
	Latency    time.Duration
}

// Judge turns an attempt into the delivery's outcome: 2xx succeeds; 410
// disables the endpoint; anything else retries on the schedule until the
// last attempt or until the endpoint has failed for DisableAfter.
func Judge(j Job, a Attempt, now time.Time, rnd float64) Outcome {
	o := Outcome{Code: a.Code, Error: a.Err, Latency: a.Latency}
	switch {
	case a.Code >= 200 && a.Code < 300:
		o.Status, o.Success = StatusSucceeded, true
		return o
	case a.Code == http.StatusGone:
		o.Status, o.Failure = StatusFailed, true
		o.DisableEndpoint = "The endpoint answered 410 Gone."
		return o
	}
	o.Failure = true
	if o.Error == "" {
		o.Error = "The endpoint answered " + strconv.Itoa(a.Code) + "."
	}
	if fs := j.Endpoint.FailingSince; fs != nil && now.Sub(*fs) >= DisableAfter {
		o.Status = StatusFailed
		o.DisableEndpoint = "Every attempt failed for 5 days."
		return o
	}
	next, ok := NextAttempt(now, j.Attempts+1, ParseRetryAfter(a.RetryAfter, now), rnd)
	if !ok {
		o.Status = StatusFailed
		return o
	}
	o.Status, o.Next = StatusPending, next
	return o
}

// GrantDenies says why the grant no longer lets the endpoint's partner
// receive an event of type t for the restaurant, or "" when it does.
func GrantDenies(g *contracts.Grant, restaurantID, t string, now time.Time) string {
	switch {
	case g == nil:
		return "The authorization no longer exists."
	case g.Status != "active" || !now.Before(g.ExpiresAt):
		return "The authorization was revoked or has expired."
	case g.ClientStatus != "approved":
		return "The partner application is no longer approved."
	case !Covers(g, restaurantID):
		return "The authorization no longer covers this restaurant."
	case t != TestEventType && !Visible(t, g.Scopes):
		return "The authorization no longer has the scopes to read " + t + " events."
	}
	return ""
}

// Covers reports whether the grant covers the restaurant, directly or
// through an organization.
func Covers(g *contracts.Grant, restaurantID string) bool {
	for _, r := range g.Restaurants {
		if strings.EqualFold(r.RestaurantID, restaurantID) {
			return true
		}
	}
	for _, o := range g.Organizations {
		for _, r := range o.RestaurantIDs {
			if strings.EqualFold(r, restaurantID) {
				return true
			}
		}
	}
	return false
}

// Jitter is the random source of NextAttempt in production.
func Jitter() float64 { return rand.Float64() }

// EventEnvelope is an event as partners read it, the same in the feed and
// in a webhook body.
type EventEnvelope struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Timestamp    time.Time       `json:"timestamp"`
	RestaurantID string          `json:"restaurantId"`
	Seq          int64           `json:"seq"`
	Data         json.RawMessage `json:"data"`
}

// Envelope is e as partners read it.
func (e Event) Envelope() EventEnvelope {
	return EventEnvelope{ID: e.ID, Type: e.Type, Timestamp: e.OccurredAt, RestaurantID: e.RestaurantID, Seq: e.Seq, Data: e.Data}
}
