package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/accounting/internal/domain"
	"partnerapi.dev/services/contracts"
)

// The operations a mixed round draws from, all on one business day: s1 is
// the payment the corrections and the new POS data are about, s2 another
// payment of the same day.
const (
	acPreview = "preview a correction of s1"
	acApply   = "apply a correction of s1"
	acUndo    = "undo the correction of s1"
	acApply2  = "apply a correction of s2"
	acIngest  = "new POS data for s1"
	acReport  = "read the day's report"
)

var accountingKinds = []string{acPreview, acApply, acApply, acUndo, acUndo, acApply2, acIngest, acIngest, acReport, acReport}

type accountingOp struct {
	kind   string
	delay  time.Duration
	fresh  bool   // previews just before writing rather than at the round's start
	to     string // the method a correction moves to
	gross  int64  // new POS data: s1's new gross
	status int
	body   []byte

	preview  *preview // what a write was sent from
	previewd []byte
}

func (op *accountingOp) String() string {
	return fmt.Sprintf("%s (fresh %v, to %s, gross %d) answered %d %s", op.kind, op.fresh, op.to, op.gross, op.status, op.body)
}

// Corrections of one day race each other, their undos, another payment's
// correction, new POS data for the corrected payment and report reads. What
// committed must keep the ledger's rules: one ledger row per successful
// apply or undo and one event each, the day's revisions one chain, every
// report (read alone, in a preview or in a write's answer) from one moment,
// and a day whose corrected payment changed afterwards blocked_stale.
func TestMixedCorrectionWrites(t *testing.T) {
	t.Parallel()
	rng, seed := testenv.Random(t)
	rounds := testenv.Rounds(t, 15)
	e := newEnv(t)
	first := bizdate.Date{Year: 2026, Month: time.July, Day: 15}
	for round := range rounds {
		date := first.AddDays(-round)
		y, m, d := date.Time().Date()
		s1, s2 := fmt.Sprintf("r%d-1", round), fmt.Sprintf("r%d-2", round)
		at := hel(y, m, d, 12, 0)
		e.ingest(source(helsinki, s1, "card", 2000, at), source(helsinki, s2, "cash", 1000, at))
		e.takeEvents()
		grosses := []int64{2000} // every gross s1 had in the round

		ops := make([]*accountingOp, 3+rng.IntN(4))
		for i := range ops {
			op := &accountingOp{kind: accountingKinds[rng.IntN(len(accountingKinds))],
				delay: time.Duration(rng.IntN(3000)) * time.Microsecond, fresh: rng.IntN(3) > 0,
				to: []string{"cash", "online", "manual"}[rng.IntN(3)]}
			if op.kind == acIngest {
				op.gross = 2000 + 10*int64(i+1)
				grosses = append(grosses, op.gross)
			}
			ops[i] = op
		}
		// Previews taken at the round's start, for the writes that do not
		// preview again.
		for _, op := range ops {
			if !op.fresh {
				op.preview, op.previewd = e.mixedPreview(date, op, s1, s2)
			}
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, op := range ops {
			wg.Go(func() {
				<-start
				time.Sleep(op.delay)
				e.runAccountingOp(date, op, s1, s2, at)
			})
		}
		close(start)
		wg.Wait()
		checkAccountingRound(t, e, seed, round, date, s1, s2, grosses, ops, e.takeEvents())
		if t.Failed() {
			return
		}
	}
}

// mixedPreview previews what op would write; nil when the preview is refused.
func (e *env) mixedPreview(date bizdate.Date, op *accountingOp, s1, s2 string) (*preview, []byte) {
	body := map[string]any{"businessDate": date.String(), "sourceKind": "order", "sourceRecordId": s1, "reason": "Keyed wrong"}
	switch op.kind {
	case acUndo:
		body["action"] = "undo"
	case acApply2:
		body["action"], body["sourceRecordId"], body["toMethodKey"] = "correct", s2, "card"
	default:
		body["action"], body["toMethodKey"] = "correct", op.to
	}
	raw, _ := json.Marshal(body)
	status, out := e.do(http.MethodPost, base(helsinki)+"/payment-corrections/preview", helsinki, strings.NewReader(string(raw)), nil)
	if status != http.StatusOK {
		return nil, out
	}
	var p struct{ Data preview }
	if err := json.Unmarshal(out, &p); err != nil {
		e.t.Errorf("preview: %v: %s", err, out)
		return nil, out
	}
	return &p.Data, out
}

func (e *env) runAccountingOp(date bizdate.Date, op *accountingOp, s1, s2 string, at time.Time) {
	switch op.kind {
	case acIngest:
		op.status, op.body = e.ingestRaw(ndjson(source(helsinki, s1, "card", op.gross, at)))
		return
	case acReport:
		op.status, op.body = e.do(http.MethodGet, reportPath(helsinki, "day", date.String(), date.String()), helsinki, nil, nil)
		return
	}
	if op.fresh || op.preview == nil {
		op.preview, op.previewd = e.mixedPreview(date, op, s1, s2)
	}
	if op.preview == nil || op.kind == acPreview {
		op.status, op.body = http.StatusOK, op.previewd
		if op.preview == nil {
			op.status = http.StatusConflict
		}
		return
	}
	path := "/payment-corrections/apply"
	if op.kind == acUndo {
		path = "/payment-corrections/undo"
	}
	raw, _ := json.Marshal(writeBody(*op.preview, domain.NewID()))
	op.status, op.body = e.do(http.MethodPost, base(helsinki)+path, helsinki, strings.NewReader(string(raw)), nil)
}

func checkAccountingRound(t *testing.T, e *env, seed uint64, round int, date bizdate.Date, s1, s2 string, grosses []int64,
	ops []*accountingOp, events []event) {
	t.Helper()
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	initial := domain.InitialRevision(helsinki, date)

	// consistent checks that a report was read at one moment: its raw
	// total is s2 and one of s1's grosses, the s1 it shows is that same
	// one, its latest correction is revision rev (when given) and its
	// totals add up.
	consistent := func(what string, r report, rev string) {
		s1Gross := r.RawTotalMinor - 1000
		if !slices.Contains(grosses, s1Gross) {
			fail("%s: raw total %d is no state of the day (s1 was one of %v, s2 1000)", what, r.RawTotalMinor, grosses)
		}
		for _, s := range r.Sources {
			if s.SourceRecordID == s1 && s.GrossMinor != s1Gross {
				fail("%s: shows s1 at %d beside a raw total of s1 at %d", what, s.GrossMinor, s1Gross)
			}
		}
		if rev != "" {
			latest := initial
			if n := len(r.Corrections); n > 0 {
				latest = r.Corrections[n-1].RevisionID
			}
			if latest != rev {
				fail("%s: answers revision %s with a ledger ending at revision %s", what, rev, latest)
			}
		}
		for _, w := range r.Warnings {
			if w.Code == "totals_not_conserved" {
				fail("%s: totals not conserved", what)
			}
		}
	}

	edges := map[string]string{} // revision -> the revision a write moved it to
	batches := map[string]string{}
	want := map[string]int{}
	for _, op := range ops {
		if op.preview != nil {
			consistent(op.kind+": its preview's before", op.preview.Before, op.preview.ExpectedRevisionID)
			consistent(op.kind+": its preview's after", op.preview.After, "")
		}
		switch {
		case op.status == http.StatusConflict && op.kind != acIngest && op.kind != acReport:
			continue
		case op.status != http.StatusOK:
			fail("%v: only 200 and 409 are expected", op)
			continue
		}
		switch op.kind {
		case acReport:
			var r struct{ Data report }
			if err := json.Unmarshal(op.body, &r); err != nil {
				fail("%v: %v", op, err)
			}
			consistent("a report read", r.Data, "")
		case acApply, acApply2, acUndo:
			var r struct{ Data result }
			if err := json.Unmarshal(op.body, &r); err != nil {
				fail("%v: %v", op, err)
				continue
			}
			consistent(op.kind+": its answer", r.Data.Report, r.Data.RevisionID)
			from := op.preview.ExpectedRevisionID
			if to, ok := edges[from]; ok {
				fail("revision %s moved twice: to %s and to %s", from, to, r.Data.RevisionID)
			}
			edges[from] = r.Data.RevisionID
			typ := contracts.EventPaymentCorrectionApplied
			if op.kind == acUndo {
				typ = contracts.EventPaymentCorrectionUndone
			}
			batches[r.Data.BatchID] = typ
			want[typ]++
		}
	}

	// The revisions form one chain from the day's initial revision to its
	// current one, through every successful write.
	var current string
	if err := e.db.Gorm.Raw(`SELECT COALESCE((SELECT revision_id::text FROM day_revisions WHERE restaurant_id = ? AND business_date = ?::date), ?)`,
		helsinki, date.String(), initial).Scan(&current).Error; err != nil {
		t.Fatal(err)
	}
	rev, steps := initial, 0
	for next, ok := edges[rev]; ok; next, ok = edges[rev] {
		rev, steps = next, steps+1
	}
	if steps != len(edges) || rev != current {
		fail("revisions: %d writes moved them, a chain of %d from the initial revision ends at %s, the day is at %s", len(edges), steps, rev, current)
	}

	// One ledger row and one event per successful write.
	var ledger []string
	if err := e.db.Gorm.Raw(`SELECT batch_id::text FROM correction_ledger WHERE restaurant_id = ? AND business_date = ?::date ORDER BY position`,
		helsinki, date.String()).Scan(&ledger).Error; err != nil {
		t.Fatal(err)
	}
	if len(ledger) != len(batches) {
		fail("%d ledger rows for %d successful writes", len(ledger), len(batches))
	}
	for _, b := range ledger {
		if _, ok := batches[b]; !ok {
			fail("ledger row of batch %s that no answer reported", b)
		}
	}
	got := map[string]int{}
	for _, ev := range events {
		var ce correctionEvent
		_ = json.Unmarshal(ev.Data, &ce)
		b := ce.BatchID
		if batches[b] != ev.Type {
			fail("event %s of batch %s: no successful write of that kind answered it", ev.Type, b)
		}
		got[ev.Type]++
	}
	for typ, n := range want {
		if got[typ] != n {
			fail("%d successful writes call for %d %s events; the log has %d", n, n, typ, got[typ])
		}
	}

	// The day is blocked_stale exactly when an active correction was made
	// on a version of its payment that is no longer the current one.
	var stale bool
	if err := e.db.Gorm.Raw(`SELECT EXISTS (SELECT 1 FROM correction_ledger c
  JOIN payment_sources s ON s.restaurant_id = c.restaurant_id AND s.source_kind = c.source_kind AND s.source_record_id = c.source_record_id
 WHERE c.restaurant_id = ? AND c.business_date = ?::date AND c.action = 'correct' AND c.source_fingerprint <> s.fingerprint
   AND NOT EXISTS (SELECT 1 FROM correction_ledger u WHERE u.undoes_correction_id = c.correction_id))`, helsinki, date.String()).Scan(&stale).Error; err != nil {
		t.Fatal(err)
	}
	if status := mustGet[report](e, reportPath(helsinki, "day", date.String(), date.String()), helsinki).Status; (status == domain.StatusBlockedStale) != stale {
		fail("the day's report is %v, but a corrected payment changed after its correction: %v", status, stale)
	}

	if len(problems) > 0 {
		var b strings.Builder
		for _, op := range ops {
			fmt.Fprintf(&b, "\n  op: %v", op)
		}
		t.Errorf("seed %d, round %d (%s):\n  %s%s", seed, round, date, strings.Join(problems, "\n  "), b.String())
	}
}

// Two ingestions moving one payment to two other days at once: the payment
// ends on one day, and every day's totals count it only where it is.
func TestConcurrentIngestionsMovingOnePayment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	days := []int{1, 2, 3}
	for round := range 20 {
		id := fmt.Sprintf("moving-%d", round)
		e.ingest(source(helsinki, id, "card", 100, hel(2026, 7, 1, 12, 0)))
		var wg sync.WaitGroup
		for _, d := range days[1:] {
			wg.Go(func() {
				if status, raw := e.ingestRaw(ndjson(source(helsinki, id, "card", 100, hel(2026, 7, d, 12, 0)))); status != http.StatusOK {
					t.Errorf("ingest: %d %s", status, raw)
				}
			})
		}
		wg.Wait()
		counted := 0
		for _, d := range days {
			date := fmt.Sprintf("2026-07-%02d", d)
			counted += int(mustGet[report](e, reportPath(helsinki, "day", date, date), helsinki).RawTotalMinor)
		}
		if counted != 100*(round+1) {
			t.Fatalf("round %d: the days' raw totals count %d of the %d the payments hold", round, counted, 100*(round+1))
		}
	}
}
