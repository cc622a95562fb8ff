// Package domain holds the events service's rules: what an append may carry,
// which events a grant sees, how a feed page is cut and when a cursor has
// expired. It knows neither HTTP nor the database: the store numbers and
// keeps events, the api binds requests.
package domain

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"partnerapi.dev/pkg/fault"
	"partnerapi.dev/services/contracts"
)

// Bounds of an append and of a feed page.
const (
	// MaxAppendEvents bounds one relay call.
	MaxAppendEvents = 500
	// MaxEventData bounds one event's data (the REST representations are
	// under 20 KB).
	MaxEventData = 64 << 10
	DefaultLimit = 50
	MaxLimit     = 200
	// MaxWait bounds a long poll.
	MaxWait = 30 * time.Second
	// ScanWindow is how many events one page looks at, at most, before
	// answering: a reader whose scopes or filter skip most events still
	// gets an answer quickly and advances by nextAfter.
	ScanWindow = 1000
	// Retention is how long events are kept.
	Retention = 30 * 24 * time.Hour
	// MaxTypeFilters bounds the types filter, MaxTypesLength its length.
	MaxTypeFilters = 20
	MaxTypesLength = 1000
)

// Event is one numbered event of a restaurant's log.
type Event struct {
	ID           string
	Type         string
	RestaurantID string
	Seq          int64
	OccurredAt   time.Time
	Data         json.RawMessage
}

// Head is a restaurant's log range: events oldestSeq..headSeq are kept
// (none when oldestSeq > headSeq).
type Head struct {
	HeadSeq   int64
	OldestSeq int64
}

// Scanned is one event's number and type, read before its body so a page
// filters without loading what it skips.
type Scanned struct {
	Seq  int64
	Type string
}

// AppendResult counts the new events and those appended before.
type AppendResult struct {
	Appended   int
	Duplicates int
	// Restaurants are the restaurants that got new events.
	Restaurants []string
}

// Repository keeps the log.
type Repository interface {
	// Append stores the new events of batch (already checked), numbering
	// each restaurant's contiguously in the order given, in one
	// transaction.
	Append(ctx context.Context, source string, batch []contracts.EventRecord) (AppendResult, error)
	// Page reads, in one snapshot, the restaurant's range and the events
	// after after: first up to ScanWindow numbers and types, then the bodies
	// pick chooses.
	Page(ctx context.Context, restaurantID string, after int64, pick func(Head, []Scanned) []int64) (Head, []Event, error)
}

// Notifier wakes long polls when a restaurant's log grows, across replicas.
type Notifier interface {
	// Subscribe returns a channel that receives after an append to the
	// restaurant, and a function ending the subscription.
	Subscribe(restaurantID string) (<-chan struct{}, func())
}

var (
	uuidRE    = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	eventIDRE = regexp.MustCompile(`^evt_[0-9A-Za-z]{26}$`)
	typeRE    = regexp.MustCompile(`^[a-z_]+(\.[a-z_]+)?$`)
	prefixRE  = regexp.MustCompile(`^[a-z_]+\.\*$`)
)

// IsUUID reports whether s is a lower-case uuid.
func IsUUID(s string) bool { return uuidRE.MatchString(s) }

func invalid(format string, args ...any) error {
	return fault.New(fault.Invalid, fmt.Sprintf(format, args...))
}

// CheckAppend refuses a batch out of bounds and normalises it: restaurant
// ids lower-cased, an id repeated within the batch kept once (the first).
func CheckAppend(a contracts.EventAppend) ([]contracts.EventRecord, error) {
	if strings.TrimSpace(a.Source) == "" || len(a.Source) > 64 {
		return nil, invalid("source must name the sending service (1 to 64 characters).")
	}
	if len(a.Events) == 0 {
		return nil, invalid("events is empty; send at least one event.")
	}
	if len(a.Events) > MaxAppendEvents {
		return nil, invalid("events has %d events; send at most %d per call.", len(a.Events), MaxAppendEvents)
	}
	seen := make(map[string]bool, len(a.Events))
	out := make([]contracts.EventRecord, 0, len(a.Events))
	for i, e := range a.Events {
		if !eventIDRE.MatchString(e.ID) {
			return nil, invalid("events[%d].id must be evt_ followed by 26 letters or digits.", i)
		}
		if _, ok := contracts.EventScopes[e.Type]; !ok {
			return nil, invalid("events[%d].type %q is not an event type.", i, e.Type)
		}
		e.RestaurantID = strings.ToLower(e.RestaurantID)
		if !IsUUID(e.RestaurantID) {
			return nil, invalid("events[%d].restaurantId must be a uuid.", i)
		}
		if e.OccurredAt.IsZero() {
			return nil, invalid("events[%d].occurredAt is required.", i)
		}
		if len(e.Data) == 0 || len(e.Data) > MaxEventData || !json.Valid(e.Data) || e.Data[0] != '{' {
			return nil, invalid("events[%d].data must be a JSON object of at most %d bytes.", i, MaxEventData)
		}
		if e.Type == contracts.EventAuthorizationRevoked {
			if d, ok := RevokedAuthorization(e.Data); !ok || !IsUUID(d.AuthorizationID) {
				return nil, invalid("events[%d].data must name the revoked authorization (authorizationId, a uuid) and its clientId.", i)
			}
		}
		if a := e.Actor; a != nil && (!IsUUID(a.GrantID) || a.ClientID == "" || len(a.ClientID) > 255 || len(a.UserID) > 64) {
			return nil, invalid("events[%d].actor must name a client (1 to 255 characters), a grant (uuid) and a user.", i)
		}
		if seen[e.ID] {
			continue
		}
		seen[e.ID] = true
		e.OccurredAt = e.OccurredAt.UTC()
		out = append(out, e)
	}
	return out, nil
}

// RevokedAuthorization reads the data of an authorization.revoked event:
// the revoked grant and its client.
func RevokedAuthorization(data json.RawMessage) (contracts.AuthorizationRevoked, bool) {
	var d contracts.AuthorizationRevoked
	if json.Unmarshal(data, &d) != nil || d.AuthorizationID == "" || d.ClientID == "" {
		return d, false
	}
	return d, true
}

// ShownTo reports whether a reader of the partner client clientID may see
// e: an authorization.revoked event only its own client may, so no partner
// learns which other applications a restaurant had connected.
func (e Event) ShownTo(clientID string) bool {
	if e.Type != contracts.EventAuthorizationRevoked {
		return true
	}
	d, ok := RevokedAuthorization(e.Data)
	return ok && d.ClientID == clientID
}

// Visible reports whether a grant holding scopes may read events of type t:
// it needs every scope of the operation that reads the resource.
func Visible(t string, scopes []string) bool {
	need, ok := contracts.EventScopes[t]
	if !ok {
		return false
	}
	for _, s := range need {
		if !slices.Contains(scopes, s) {
			return false
		}
	}
	return true
}

// TypeFilter selects event types: exact names and prefixes ("order.*").
// The zero value selects every type.
type TypeFilter struct {
	exact    []string
	prefixes []string
}

// ParseTypes reads the comma-separated types parameter.
func ParseTypes(s string) (TypeFilter, error) {
	var f TypeFilter
	if s == "" || len(s) > MaxTypesLength {
		return f, invalid("types must be 1 to %d characters: comma-separated event types; leave it out to read every type.", MaxTypesLength)
	}
	parts := strings.Split(s, ",")
	if len(parts) > MaxTypeFilters {
		return f, invalid("types lists %d entries; give at most %d.", len(parts), MaxTypeFilters)
	}
	for _, p := range parts {
		switch {
		case prefixRE.MatchString(p):
			f.prefixes = append(f.prefixes, strings.TrimSuffix(p, "*"))
		case typeRE.MatchString(p):
			f.exact = append(f.exact, p)
		default:
			return f, invalid("types must be comma-separated event types, e.g. order.created or order.*; %q is not one.", p)
		}
	}
	return f, nil
}

// Match reports whether the filter selects type t.
func (f TypeFilter) Match(t string) bool {
	if len(f.exact) == 0 && len(f.prefixes) == 0 {
		return true
	}
	if slices.Contains(f.exact, t) {
		return true
	}
	for _, p := range f.prefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// ErrCursorExpired says the reader's position is older than the kept log;
// OldestSeq is where it starts.
type ErrCursorExpired struct{ OldestSeq int64 }

func (e *ErrCursorExpired) Error() string {
	return fmt.Sprintf("Events before %d are no longer kept; read the current state from the REST operations, then read the feed from after=%d.", e.OldestSeq, e.OldestSeq-1)
}

// FromOldest is a Query's After when the reader gave none: the page starts
// at the oldest kept event, however far retention has moved it.
const FromOldest = -1

// Query is one feed request.
type Query struct {
	RestaurantID string
	// After is the last number read, or FromOldest.
	After  int64
	Limit  int
	Types  TypeFilter
	Scopes []string
	// ClientID is the reader's partner client (Event.ShownTo).
	ClientID string
	Wait     time.Duration
}

// FeedPage is one answer of the feed.
type FeedPage struct {
	Events []Event
	// NextAfter is the last number scanned: the next page's after.
	NextAfter int64
	HasMore   bool
	Head
}

// Feed answers q: the events after q.After the grant sees and the filter
// selects, at most q.Limit. With q.Wait and nothing after q.After yet, it
// waits for an append to the restaurant up to q.Wait, then answers.
func Feed(ctx context.Context, repo Repository, notify Notifier, q Query) (FeedPage, error) {
	var deadline time.Time
	if q.Wait > 0 && notify != nil {
		deadline = time.Now().Add(q.Wait)
	}
	for {
		// Subscribe before reading, so an append committed after the read
		// still wakes this poll.
		var wake <-chan struct{}
		var stop func()
		if !deadline.IsZero() {
			wake, stop = notify.Subscribe(q.RestaurantID)
		}
		page, after, err := readPage(ctx, repo, q)
		if err == nil && q.After == FromOldest {
			// Wait from where the page started, as if it had been given.
			q.After = after
		}
		if err != nil || deadline.IsZero() || page.NextAfter > q.After || page.HeadSeq > q.After {
			if stop != nil {
				stop()
			}
			return page, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			stop()
			return page, nil
		}
		// The notification is the fast path; the short poll bounds how
		// long a lost notification (a reconnecting listener) delays it.
		t := time.NewTimer(min(left, pollFallback))
		select {
		case <-wake:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			stop()
			return page, nil
		}
		t.Stop()
		stop()
	}
}

// pollFallback is how often a waiting poll reads again without a
// notification.
const pollFallback = 2 * time.Second

// readPage reads one page and answers where it started (q.After, or the
// oldest kept position for FromOldest).
func readPage(ctx context.Context, repo Repository, q Query) (FeedPage, int64, error) {
	var page FeedPage
	after := q.After
	head, events, err := repo.Page(ctx, q.RestaurantID, q.After, func(h Head, scanned []Scanned) []int64 {
		if after == FromOldest {
			after = h.OldestSeq - 1
		}
		page.NextAfter = after
		if after < h.OldestSeq-1 || after > h.HeadSeq {
			return nil
		}
		var picked []int64
		for _, s := range scanned {
			page.NextAfter = s.Seq
			if Visible(s.Type, q.Scopes) && q.Types.Match(s.Type) {
				picked = append(picked, s.Seq)
				if len(picked) == q.Limit {
					break
				}
			}
		}
		return picked
	})
	if err != nil {
		return FeedPage{}, 0, err
	}
	if after < head.OldestSeq-1 {
		return FeedPage{}, 0, &ErrCursorExpired{OldestSeq: head.OldestSeq}
	}
	if after > head.HeadSeq {
		return FeedPage{}, 0, invalid("after (%d) is beyond this restaurant's latest event (%d): send the nextAfter of your last page, or leave after out to read from the oldest kept event.", after, head.HeadSeq)
	}
	page.Head = head
	for _, e := range events {
		if e.ShownTo(q.ClientID) {
			page.Events = append(page.Events, e)
		}
	}
	if page.NextAfter < after {
		page.NextAfter = after
	}
	page.HasMore = head.HeadSeq > page.NextAfter
	return page, after, nil
}
