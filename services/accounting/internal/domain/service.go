package domain

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"regexp"
	"slices"
	"time"
	"unicode/utf8"

	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/pkg/fault"
	"partnerapi.dev/pkg/idempotency"
	"partnerapi.dev/services/contracts"
)

// ErrNotFound is a source that does not exist on the business date asked.
var ErrNotFound = fault.New(fault.NotFound, "not found")

func conflict(msg string) error { return fault.New(fault.Conflict, msg) }

// Service answers the accounting operations.
type Service struct {
	Repo Repository
	// Now is the clock (tests move it to expire previews).
	Now func() time.Time
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// PeriodQuery is a report's dates and scope.
type PeriodQuery struct {
	Scope      string
	Start, End bizdate.Date
}

// CheckWindow checks a window of business dates: start not after end, at
// most MaxWindowDays dates.
func CheckWindow(start, end bizdate.Date) error {
	if end.Before(start) {
		return invalid("end_date must not be before start_date.")
	}
	if start.DaysInclusive(end) > MaxWindowDays {
		return invalid("The window from start_date to end_date holds at most %d dates.", MaxWindowDays)
	}
	return nil
}

// NewPeriod is a report period of scope from start to end (a window
// CheckWindow accepted): a day is one date, a month stays within one
// calendar month.
func NewPeriod(scope string, start, end bizdate.Date) (PeriodQuery, error) {
	p := PeriodQuery{Scope: scope, Start: start, End: end}
	switch p.Scope {
	case "day":
		if start != end {
			return p, invalid("scope=day needs start_date equal to end_date.")
		}
	case "month":
		if start.Year != end.Year || start.Month != end.Month {
			return p, invalid("scope=month needs start_date and end_date in the same calendar month.")
		}
	case "":
		return p, invalid("scope is required: day or month.")
	default:
		return p, invalid("scope must be day or month.")
	}
	return p, nil
}

// Report is the payment report of a period.
func (s *Service) Report(ctx context.Context, t Tenant, p PeriodQuery, readOnly bool) (rep Report, err error) {
	err = s.Repo.Snapshot(ctx, func(r Reader) error {
		rep, err = buildFrom(ctx, r, t, p, readOnly, nil)
		return err
	})
	return rep, err
}

// buildFrom reads a report's inputs from r; extra rows are appended to the
// ledger (a preview's pending correction).
func buildFrom(ctx context.Context, r Reader, t Tenant, p PeriodQuery, readOnly bool, extra *Correction) (Report, error) {
	days, err := r.DayTotals(ctx, t.ID, p.Start, p.End)
	if err != nil {
		return Report{}, err
	}
	flags, err := r.RefundFlags(ctx, t.ID, p.Start, p.End)
	if err != nil {
		return Report{}, err
	}
	in := ReportInput{Tenant: t, Scope: p.Scope, Start: p.Start, End: p.End, Days: days, Refunds: flags, ReadOnly: readOnly}
	ledger, err := r.Ledger(ctx, t.ID, p.Start, p.End)
	if err != nil {
		// Raw values do not depend on the ledger: answer them, not ready.
		slog.WarnContext(ctx, "correction ledger unreadable", "error", err)
		in.LedgerUnavailable = true
		return BuildReport(in), nil
	}
	if extra != nil {
		ledger = append(ledger, *extra)
	}
	in.Ledger = ledger
	var keys []string
	for _, c := range ledger {
		if !slices.Contains(keys, c.SourceKey()) {
			keys = append(keys, c.SourceKey())
		}
	}
	in.Current = map[string]Source{}
	if len(keys) > 0 {
		srcs, err := r.SourcesByKey(ctx, t.ID, keys)
		if err != nil {
			return Report{}, err
		}
		for _, src := range srcs {
			in.Current[src.Key()] = src
		}
	}
	return BuildReport(in), nil
}

// Workspace is the correction workspace's data.
type Workspace struct {
	RestaurantID string       `json:"restaurantId"`
	Report       Report       `json:"report"`
	Sources      []SourceView `json:"sources"`
	Methods      []Method     `json:"methods"`
	CanWrite     bool         `json:"canWrite"`
}

// CheckWorkspace checks the workspace's period: not after today's business
// date.
func (s *Service) CheckWorkspace(t Tenant, p PeriodQuery) error {
	today := bizdate.Of(s.now(), t.Loc, t.DayStartHour)
	if p.End.After(today) {
		return invalid("end_date must not be after today's business date (%s).", today)
	}
	return nil
}

// Workspace returns the report and up to 500 sources of the period.
func (s *Service) Workspace(ctx context.Context, t Tenant, p PeriodQuery, query string, canWrite bool) (Workspace, error) {
	rep, err := s.Report(ctx, t, p, !canWrite)
	if err != nil {
		return Workspace{}, err
	}
	srcs, err := s.Repo.WorkspaceSources(ctx, t.ID, p.Start, p.End, query, MaxWorkspace)
	if err != nil {
		return Workspace{}, err
	}
	views := make([]SourceView, len(srcs))
	for i, src := range srcs {
		views[i] = ViewSource(src)
	}
	return Workspace{RestaurantID: t.ID, Report: rep, Sources: views, Methods: Methods, CanWrite: canWrite}, nil
}

// CorrectionInput is a preview's body, echoed in the preview and repeated
// in apply and undo.
type CorrectionInput struct {
	BusinessDate   *bizdate.Date `json:"businessDate"`
	SourceKind     string        `json:"sourceKind"`
	SourceRecordID string        `json:"sourceRecordId"`
	Action         string        `json:"action"`
	ToMethodKey    *string       `json:"toMethodKey,omitempty"`
	Reason         string        `json:"reason"`
}

// WriteInput is an apply or undo body.
type WriteInput struct {
	CorrectionInput
	ExpectedRevisionID string     `json:"expectedRevisionId"`
	PreviewFingerprint string     `json:"previewFingerprint"`
	ExpiresAt          *time.Time `json:"expiresAt"`
	Confirmed          *bool      `json:"confirmed"`
	IdempotencyKey     string     `json:"idempotencyKey"`
}

// Preview is a correction preview.
type Preview struct {
	RestaurantID       string          `json:"restaurantId"`
	Input              CorrectionInput `json:"input"`
	ExpectedRevisionID string          `json:"expectedRevisionId"`
	PreviewFingerprint string          `json:"previewFingerprint"`
	ExpiresAt          time.Time       `json:"expiresAt"`
	Before             Report          `json:"before"`
	After              Report          `json:"after"`
}

// Result is an apply's or undo's answer.
type Result struct {
	RestaurantID string `json:"restaurantId"`
	BatchID      string `json:"batchId"`
	RevisionID   string `json:"revisionId"`
	Replayed     bool   `json:"replayed"`
	Report       Report `json:"report"`
}

func (in CorrectionInput) validate() error {
	if in.BusinessDate == nil {
		return invalid("businessDate is required (YYYY-MM-DD).")
	}
	if in.SourceKind == "" || len(in.SourceKind) > 255 {
		return invalid("sourceKind must be 1 to 255 characters: a returned source's sourceKind.")
	}
	if in.SourceRecordID == "" || len(in.SourceRecordID) > 255 {
		return invalid("sourceRecordId must be 1 to 255 characters: a returned source's sourceRecordId.")
	}
	if n := utf8.RuneCountInString(in.Reason); n < 1 || n > 500 {
		return invalid("reason must be 1 to 500 characters.")
	}
	switch in.Action {
	case "correct":
		if in.ToMethodKey == nil {
			return invalid("toMethodKey is required with action correct.")
		}
		if !KnownMethod(*in.ToMethodKey) {
			return invalid("toMethodKey is not a supported method; use one of the workspace's methods.")
		}
	case "undo":
		if in.ToMethodKey != nil {
			return invalid("toMethodKey is not allowed with action undo.")
		}
	default:
		return invalid("action must be correct or undo.")
	}
	return nil
}

// hex64 is the shape of a preview fingerprint. Upper case is let through
// to the comparison: any change to the preview's fingerprint is a stale or
// altered preview, 409, as a fingerprint of the wrong shape is a bad
// request, 400.
var hex64 = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)

func (in WriteInput) validate(action string) error {
	if in.Action != action {
		return invalid("action must be %q on this operation.", action)
	}
	if err := in.CorrectionInput.validate(); err != nil {
		return err
	}
	switch {
	case !IsUUID(in.ExpectedRevisionID):
		return invalid("expectedRevisionId must be the UUID returned by the preview.")
	case !hex64.MatchString(in.PreviewFingerprint):
		return invalid("previewFingerprint must be the preview's 64 hexadecimal characters, unchanged.")
	case in.ExpiresAt == nil:
		return invalid("expiresAt is required: the preview's expiresAt, unchanged.")
	case in.Confirmed == nil || !*in.Confirmed:
		return invalid("confirmed must be true.")
	case !idempotency.ValidKey(in.IdempotencyKey):
		return invalid("idempotencyKey must be a UUID.")
	}
	return nil
}

// plan finds the source and builds the ledger row the input would write,
// and the day's current revision.
func plan(ctx context.Context, r Reader, t Tenant, in CorrectionInput) (Source, Correction, string, error) {
	src, err := r.Source(ctx, t.ID, in.SourceKind, in.SourceRecordID)
	if err != nil {
		return Source{}, Correction{}, "", err
	}
	if src.BusinessDate != *in.BusinessDate {
		return Source{}, Correction{}, "", ErrNotFound
	}
	ledger, err := r.Ledger(ctx, t.ID, src.BusinessDate, src.BusinessDate)
	if err != nil {
		return Source{}, Correction{}, "", err
	}
	active := activeCorrection(ledger, src.Key())
	rev, err := r.Revision(ctx, t.ID, src.BusinessDate)
	if err != nil {
		return Source{}, Correction{}, "", err
	}
	c := Correction{RestaurantID: t.ID, Date: src.BusinessDate, Action: in.Action, SourceKind: src.Kind,
		SourceRecordID: src.RecordID, Reason: in.Reason, SourceFingerprint: src.Fingerprint}
	switch in.Action {
	case "correct":
		if active != nil {
			return Source{}, Correction{}, "", conflict("This payment already has an active correction; undo it first.")
		}
		if *in.ToMethodKey == src.Method {
			return Source{}, Correction{}, "", invalid("toMethodKey must differ from the payment's current method (%s).", src.Method)
		}
		c.From, c.To, c.Moved = src.Method, *in.ToMethodKey, src.Amounts
	case "undo":
		if active == nil {
			return Source{}, Correction{}, "", conflict("This payment has no active correction to undo.")
		}
		undoes := active.ID
		c.From, c.To, c.Moved, c.Undoes = active.To, active.From, active.Moved, &undoes
		c.SourceFingerprint = active.SourceFingerprint
	}
	return src, c, rev, nil
}

func activeCorrection(ledger []Correction, key string) *Correction {
	undone := map[string]bool{}
	for _, c := range ledger {
		if c.Undoes != nil {
			undone[*c.Undoes] = true
		}
	}
	for i := len(ledger) - 1; i >= 0; i-- {
		c := ledger[i]
		if c.Action == "correct" && c.SourceKey() == key && !undone[c.ID] {
			return &ledger[i]
		}
	}
	return nil
}

// PreviewFingerprint is the hex SHA-256 of the canonical encoding of the
// restaurant, the input, the expected revision, the source's fingerprint and
// the expiry.
func PreviewFingerprint(restaurant string, in CorrectionInput, revision, sourceFingerprint string, expiresAt time.Time) string {
	raw, _ := json.Marshal(struct {
		R  string          `json:"restaurantId"`
		I  CorrectionInput `json:"input"`
		V  string          `json:"expectedRevisionId"`
		S  string          `json:"sourceFingerprint"`
		Ex string          `json:"expiresAt"`
	}{restaurant, in, revision, sourceFingerprint, expiresAt.UTC().Format(time.RFC3339Nano)})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// Preview calculates a correction's effect without writing anything.
func (s *Service) Preview(ctx context.Context, t Tenant, in CorrectionInput) (Preview, error) {
	if err := in.validate(); err != nil {
		return Preview{}, err
	}
	// The revision, the source and both reports are read at one moment, so
	// the preview's reports are those of the revision it names.
	var (
		src           Source
		c             Correction
		rev           string
		before, after Report
	)
	err := s.Repo.Snapshot(ctx, func(r Reader) error {
		var err error
		if src, c, rev, err = plan(ctx, r, t, in); err != nil {
			return err
		}
		day := PeriodQuery{Scope: "day", Start: src.BusinessDate, End: src.BusinessDate}
		if before, err = buildFrom(ctx, r, t, day, false, nil); err != nil {
			return err
		}
		c.ID, c.BatchID, c.RevisionID, c.CreatedAt = "00000000-0000-4000-8000-000000000000", "00000000-0000-4000-8000-000000000000", rev, s.now()
		after, err = buildFrom(ctx, r, t, day, false, &c)
		return err
	})
	if err != nil {
		return Preview{}, err
	}
	// The preview's pending row is not a correction yet: leave it out of
	// the lists, keep its effect on the totals.
	after.Corrections = slices.DeleteFunc(after.Corrections, func(v CorrectionView) bool { return v.CorrectionID == c.ID })
	after.AppliedCorrectionIDs = slices.DeleteFunc(after.AppliedCorrectionIDs, func(id string) bool { return id == c.ID })
	expires := s.now().Add(PreviewLifetime).Truncate(time.Second)
	return Preview{RestaurantID: t.ID, Input: in, ExpectedRevisionID: rev,
		PreviewFingerprint: PreviewFingerprint(t.ID, in, rev, src.Fingerprint, expires),
		ExpiresAt:          expires, Before: before, After: after}, nil
}

// Write applies (action correct) or undoes (action undo) a previewed
// correction once per idempotency key, under the day lock, after rechecking
// expiry, revision and fingerprint.
func (s *Service) Write(ctx context.Context, t Tenant, clientID, action string, in WriteInput) (WriteResult, error) {
	if err := in.validate(action); err != nil {
		return WriteResult{}, err
	}
	req := WriteRequest{Scope: clientID + "/" + t.ID + "/payment-corrections/" + action, Key: in.IdempotencyKey, Body: in}
	return s.Repo.WriteDay(ctx, req, t.ID, *in.BusinessDate, func(w DayWriter) (any, error) {
		now := s.now()
		if now.After(*in.ExpiresAt) {
			return nil, conflict("The preview expired; preview the correction again.")
		}
		src, c, rev, err := plan(ctx, w, t, in.CorrectionInput)
		if err != nil {
			return nil, err
		}
		if rev != in.ExpectedRevisionID {
			return nil, conflict("The day's corrections changed since the preview; preview again.")
		}
		if PreviewFingerprint(t.ID, in.CorrectionInput, rev, src.Fingerprint, *in.ExpiresAt) != in.PreviewFingerprint {
			return nil, conflict("previewFingerprint does not match this request or the payment changed since the preview; preview again and send its values unchanged.")
		}
		c.ID, c.BatchID, c.RevisionID, c.CreatedAt = NewID(), NewID(), NewID(), now
		if err := w.Append(ctx, c); err != nil {
			return nil, err
		}
		rep, err := buildFrom(ctx, w, t, PeriodQuery{Scope: "day", Start: c.Date, End: c.Date}, false, nil)
		if err != nil {
			return nil, err
		}
		event := contracts.EventPaymentCorrectionApplied
		if action == "undo" {
			event = contracts.EventPaymentCorrectionUndone
		}
		if err := w.Record(ctx, Event{Type: event, RestaurantID: t.ID, Data: CorrectionEvent{RestaurantID: t.ID, BatchID: c.BatchID,
			RevisionID: c.RevisionID, BusinessDate: c.Date, SourceKind: c.SourceKind, SourceRecordID: c.SourceRecordID}}); err != nil {
			return nil, err
		}
		return Result{RestaurantID: t.ID, BatchID: c.BatchID, RevisionID: c.RevisionID, Report: rep}, nil
	})
}

// NewID returns a random (version 4) UUID.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// InitialRevision is the revision of a day with no ledger rows: derived
// from the restaurant and the date, so it is stable until the first write.
func InitialRevision(restaurant string, date bizdate.Date) string {
	sum := sha256.Sum256([]byte("revision/" + restaurant + "/" + date.String()))
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// RefundQuery is a parsed refunds request.
type RefundQuery struct {
	Start, End bizdate.Date
	OrderID    *string
	Limit      int
	Cursor     string
}

// RefundPage is one page of refund events.
type RefundPage struct {
	Events []RefundEvent
	Next   *RefundPosition
	Flags  RefundFlags
}

// Refunds reads one page, oldest first by refund business date.
func (s *Service) Refunds(ctx context.Context, t Tenant, rq RefundQuery, after *RefundPosition) (RefundPage, error) {
	events, err := s.Repo.Refunds(ctx, RefundFilter{RestaurantID: t.ID, Start: rq.Start, End: rq.End, OrderID: rq.OrderID, After: after, Limit: rq.Limit + 1})
	if err != nil {
		return RefundPage{}, err
	}
	var page RefundPage
	if len(events) > rq.Limit {
		events = events[:rq.Limit]
		last := events[len(events)-1]
		page.Next = &RefundPosition{Date: last.BusinessDate, OccurredAt: last.OccurredAt, ID: last.ID}
	}
	page.Events = events
	page.Flags = FlagsOf(events)
	return page, nil
}

// FlagsOf tells whether events have legacy timing or a refund of unknown
// accounting impact.
func FlagsOf(events []RefundEvent) RefundFlags {
	var f RefundFlags
	for _, e := range events {
		f.Legacy = f.Legacy || e.LegacyTiming
		f.Incomplete = f.Incomplete || (e.Kind == "refund" && e.Impact == nil)
	}
	return f
}
