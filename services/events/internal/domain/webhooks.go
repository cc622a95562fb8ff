package domain

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"partnerapi.dev/pkg/apispec"
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
	// MaxPendingForReplay bounds an endpoint's queue as far as replays go:
	// a replay enqueues only up to this many deliveries waiting for the
	// endpoint, and is refused (409) when that many already wait.
	MaxPendingForReplay = 10_000
	// DefaultPerEndpoint is how many deliveries to one endpoint a worker
	// sends at once by default, so a slow endpoint holds at most that
	// many of its slots.
	DefaultPerEndpoint = 4
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
	// GrantRevoked: the authorization.revoked event of GrantID has been
	// appended (read only for a delivery attempt).
	GrantRevoked bool
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
	// At is when the attempt ended.
	At time.Time
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
	// ChangeEndpoint is LockEndpoint for a change of what deliveries use
	// (address, state, secrets, existence): it first waits for the sends
	// to the endpoint in flight to end, and no send starts until the
	// change commits.
	ChangeEndpoint(o Owner, id string) (Endpoint, error)
	SaveEndpoint(e Endpoint) error
	DeleteEndpoint(o Owner, id string) error
	EnqueueTest(e Endpoint, ev Event, now time.Time) (Delivery, error)
	// RetryDelivery makes a finished delivery pending now, or ErrNotFound.
	RetryDelivery(e Endpoint, deliveryID int64, now time.Time) (Delivery, error)
	Replay(e Endpoint, from ReplayFrom, now time.Time) (ReplayResult, error)
}

// ClaimLimits bounds one claim: at most N deliveries, and for each
// endpoint at most PerEndpoint minus the claimer's deliveries to it still
// in flight (InFlight). Among endpoints, the claim takes every endpoint's
// first due delivery before any endpoint's second, oldest due first.
type ClaimLimits struct {
	N           int
	PerEndpoint int
	InFlight    map[string]int
}

// ErrTooManyPending refuses a replay into an endpoint whose queue is full.
var ErrTooManyPending = fault.New(fault.Conflict, fmt.Sprintf("%d deliveries already wait for this endpoint; replay again once they are sent (see its deliveries).", MaxPendingForReplay))

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
	// Claim leases due deliveries until now+lease, within l.
	Claim(ctx context.Context, now time.Time, lease time.Duration, l ClaimLimits) ([]Job, error)
	// Attempt runs send (one attempt of j) with j's endpoint as it is now,
	// found false once it is deleted, and records the outcome send returns;
	// no change to the endpoint commits from before send reads it until the
	// outcome is recorded (ChangeEndpoint waits).
	Attempt(ctx context.Context, j Job, send func(e Endpoint, found bool) Outcome) error
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
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil {
		if why := AddressRefusal(ip, allowLoopbackHTTP); why != "" {
			return invalid("url names an address webhooks may not reach (%s); use a public address or a host name.", why)
		}
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
	// authorization.revoked needs no subscription (it goes to every
	// endpoint of the revoked authorization).
	if n := len(contracts.EventScopes) - 1; len(types) == 0 || len(types) > n {
		return nil, invalid("eventTypes must list 1 to %d event types.", n)
	}
	out := slices.Clone(types)
	slices.Sort(out)
	for i := 1; i < len(out); i++ {
		if out[i] == out[i-1] {
			return nil, invalid("eventTypes lists %q more than once; give each type once.", out[i])
		}
	}
	for _, t := range out {
		if _, ok := contracts.EventScopes[t]; !ok {
			return nil, invalid("eventTypes: %q is not an event type.", t)
		}
		if t == contracts.EventAuthorizationRevoked {
			return nil, invalid("eventTypes: %q is sent to every endpoint of the revoked authorization without a subscription; leave it out.", t)
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
	for _, layout := range httpDates {
		if t, err := time.Parse(layout, v); err == nil {
			if t.After(now) {
				return t.Sub(now)
			}
			return 0
		}
	}
	return 0
}

// httpDates are the forms of a date in an HTTP header, tried in the order
// net/http's ParseTime tries them (IMF-fixdate, RFC 850, asctime).
var httpDates = []string{"Mon, 02 Jan 2006 15:04:05 GMT", time.RFC850, time.ANSIC}

// statusGone is the receiver's answer that its endpoint is gone for good.
const statusGone = 410

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
	case a.Code == statusGone:
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

// RevocationDenies decides a delivery to an endpoint whose authorization
// may be revoked, before the grant is looked up: its own authorization.revoked
// event goes out (handled true, why ""), whatever the grant's state now;
// another authorization's is blocked, and so is every other event once that
// event has been appended (GrantRevoked), so nothing reaches the endpoint
// after it. handled false: the grant decides (GrantDenies).
func RevocationDenies(ep Endpoint, ev Event) (why string, handled bool) {
	if ev.Type == contracts.EventAuthorizationRevoked {
		if d, ok := RevokedAuthorization(ev.Data); !ok || d.AuthorizationID != ep.GrantID {
			return "The event concerns another authorization.", true
		}
		return "", true
	}
	if ep.GrantRevoked {
		return "The authorization was revoked.", true
	}
	return "", false
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
func Jitter() float64 { return rand.Float64() } //nolint:gosec // G404: it spreads retries over time and guards nothing

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

// Naming sets of the menu resources. Services record menu and catalog
// import events with set-A names; a deployment serving set B
// (MENU_NAMING_SET=B) shows them with set-B names in the feed and in
// webhook bodies, as its REST answers do.
const (
	NamingA = "A"
	NamingB = "B"
)

// Envelope is e as partners read it in the deployment's naming set.
func (e Event) Envelope(namingSet string) EventEnvelope {
	data := e.Data
	if namingSet == NamingB && (strings.HasPrefix(e.Type, "menu.") || strings.HasPrefix(e.Type, "catalog_import.")) {
		if b, err := apispec.ToNamingSetB(data); err == nil {
			data = b
		}
	}
	return EventEnvelope{ID: e.ID, Type: e.Type, Timestamp: e.OccurredAt, RestaurantID: e.RestaurantID, Seq: e.Seq, Data: data}
}

// Backlog is what waits to be delivered to one endpoint.
type Backlog struct {
	EndpointID string
	Waiting    int64
	// OldestDue is how long the longest-due waiting delivery has been due.
	OldestDue time.Duration
}
