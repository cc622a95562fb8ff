package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// dayPool hands out business dates to correction scenarios, one scenario
// per date at a time, with the date's first payment source.
type dayPool struct {
	mu      sync.Mutex
	free    []string
	sources map[string]map[string]any
}

func newDayPool(n int) *dayPool {
	p := &dayPool{sources: map[string]map[string]any{}}
	for d := 1; d <= n; d++ {
		p.free = append(p.free, time.Now().UTC().AddDate(0, 0, -d).Format("2006-01-02"))
	}
	return p
}

func (p *dayPool) take() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) == 0 {
		return ""
	}
	d := p.free[0]
	p.free = p.free[1:]
	return d
}

func (p *dayPool) release(d string) {
	p.mu.Lock()
	p.free = append(p.free, d)
	p.mu.Unlock()
}

// source is the day's first payment source, read off the correction
// workspace once.
func (l *load) source(ctx context.Context, day string) map[string]any {
	l.days.mu.Lock()
	s, ok := l.days.sources[day]
	l.days.mu.Unlock()
	if ok {
		return s
	}
	var ws struct {
		Data struct {
			Sources []map[string]any `json:"sources"`
		} `json:"data"`
	}
	if !l.get(ctx, "payment correction workspace", l.path("/payment-correction-workspace?scope=day&start_date="+day+"&end_date="+day), &ws) ||
		len(ws.Data.Sources) == 0 {
		return nil
	}
	s = ws.Data.Sources[0]
	l.days.mu.Lock()
	l.days.sources[day] = s
	l.days.mu.Unlock()
	return s
}

// correctionChain previews a correction of a day's payment source to
// another method, applies it, previews its undo and undoes it: the day's
// report ends where it started. nil when no day is free or the day's
// source cannot be read now.
func (l *load) correctionChain(ctx context.Context, n int) *chain {
	day := l.days.take()
	if day == "" {
		return nil
	}
	src := l.source(ctx, day)
	if src == nil {
		l.days.release(day)
		return nil
	}
	to := "cash"
	if src["methodKey"] == "cash" {
		to = "card"
	}
	input := func(action string) map[string]any {
		in := map[string]any{"businessDate": day, "sourceKind": src["sourceKind"], "sourceRecordId": src["sourceRecordId"],
			"action": action, "reason": fmt.Sprintf("Faults %s #%d", l.runID, n)}
		if action == "correct" {
			in["toMethodKey"] = to
		}
		return in
	}
	c := &chain{kind: "correction " + day, check: l.checkCorrectionChain}
	preview := func(action string) func(context.Context) *keyedWrite {
		return func(context.Context) *keyedWrite {
			return &keyedWrite{op: "previewPaymentCorrection", method: http.MethodPost, path: l.path("/payment-corrections/preview"),
				body: input(action), effect: field("expectedRevisionId"), previewOnly: true}
		}
	}
	write := func(op, path, action string) func(context.Context) *keyedWrite {
		return func(context.Context) *keyedWrite {
			p := c.writes[len(c.writes)-1].answer
			body := input(action)
			body["expectedRevisionId"], body["previewFingerprint"], body["expiresAt"] = field("expectedRevisionId")(p), field("previewFingerprint")(p), field("expiresAt")(p)
			body["confirmed"] = true
			w := newKeyed(op, http.MethodPost, l.path(path), body, func(raw []byte) string { return field("batchId")(raw) + " " + field("revisionId")(raw) })
			// A write never acknowledged may find its preview expired
			// when replayed (409, nothing written): the check below
			// proves nothing of it was applied.
			w.conflictOK = true
			return w
		}
	}
	c.steps = []func(context.Context) *keyedWrite{
		preview("correct"),
		write("applyPaymentCorrection", "/payment-corrections/apply", "correct"),
		preview("undo"),
		write("undoPaymentCorrection", "/payment-corrections/undo", "undo"),
	}
	c.done = func() {
		if len(c.writes) == 0 || c.writes[0].answer == nil || (len(c.writes) == 4 && c.writes[3].answer != nil) {
			l.days.release(day)
		}
	}
	return c
}

// checkCorrectionChain, in the accounting schema and through the API:
// each successful apply or undo wrote exactly one ledger row; the source
// has as many undos as corrections (the scenario ends undone); the day's
// revision is the one its last ledger row set (no ledger row without its
// revision move, nor a move without its row); and the day's report lists
// the ledger's rows, none in effect, its adjusted total the raw one.
func (l *load) checkCorrectionChain(ctx context.Context, k *checker, c *chain) []string {
	var problems []string
	day := strings.TrimPrefix(c.kind, "correction ")
	for _, w := range c.writes {
		if w.previewOnly || w.answer == nil {
			continue
		}
		batch, _, _ := strings.Cut(w.result, " ")
		if n := k.count(ctx, `SELECT count(*) FROM accounting.correction_ledger WHERE batch_id::text = $1`, batch); n != 1 {
			problems = append(problems, fmt.Sprintf("%s: %s key %s: %d ledger rows for batch %s, want 1", c.kind, w.op, w.key, n, batch))
		}
	}
	if k.seen[c.kind] {
		return problems
	}
	k.seen[c.kind] = true
	var corrects, undos, rows int
	if err := k.conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE action = 'correct'), count(*) FILTER (WHERE action = 'undo'), count(*)
		FROM accounting.correction_ledger WHERE restaurant_id::text = $1 AND business_date = $2::date`, l.restaurant, day).Scan(&corrects, &undos, &rows); err != nil {
		return append(problems, fmt.Sprintf("%s: ledger: %v", c.kind, err))
	}
	if corrects != undos {
		problems = append(problems, fmt.Sprintf("%s: %d corrections and %d undos in the ledger, want as many", c.kind, corrects, undos))
	}
	if rows > 0 {
		if n := k.count(ctx, `SELECT count(*) FROM accounting.day_revisions d
			WHERE d.restaurant_id::text = $1 AND d.business_date = $2::date AND d.revision_id = (SELECT revision_id FROM accounting.correction_ledger
			WHERE restaurant_id::text = $1 AND business_date = $2::date ORDER BY position DESC LIMIT 1)`, l.restaurant, day); n != 1 {
			problems = append(problems, fmt.Sprintf("%s: the day's revision is not the one its last ledger row set", c.kind))
		}
	}
	var rep struct {
		Data struct {
			Status               string   `json:"status"`
			RawTotalMinor        int64    `json:"rawTotalMinor"`
			AdjustedTotalMinor   *int64   `json:"adjustedTotalMinor"`
			AppliedCorrectionIDs []string `json:"appliedCorrectionIds"`
			Corrections          []any    `json:"corrections"`
		} `json:"data"`
	}
	if !l.get(ctx, "payment report", l.path("/payment-report?scope=day&start_date="+day+"&end_date="+day), &rep) {
		return append(problems, c.kind+": payment report unreadable after the faults")
	}
	d := rep.Data
	if len(d.Corrections) != rows || len(d.AppliedCorrectionIDs) != 0 || (d.Status == "ready" && (d.AdjustedTotalMinor == nil || *d.AdjustedTotalMinor != d.RawTotalMinor)) {
		problems = append(problems, fmt.Sprintf("%s: report %s lists %d corrections (ledger %d), %d in effect, adjusted %v raw %d",
			c.kind, d.Status, len(d.Corrections), rows, len(d.AppliedCorrectionIDs), d.AdjustedTotalMinor, d.RawTotalMinor))
	}
	return problems
}
