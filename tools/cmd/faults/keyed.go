package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
)

// keyedWrite is one partner write with one idempotency key: sent twice at
// once under load (a client retrying a slow request), then once more after
// the faults. Every success of the key must name the same effect.
type keyedWrite struct {
	op           string
	method, path string
	// body holds the idempotency key; a plan has none (it writes nothing
	// and answers the same for the same input).
	body map[string]any
	key  string
	// conflictOK: a 409 is a legitimate outcome (another writer moved what
	// the write expected first), not a lost write.
	conflictOK bool
	// effect reads what identifies the write's effect off a success answer.
	effect func(raw []byte) string
	// previewOnly: the write only previews (writes nothing) and its answer
	// depends on the state the later steps change, so it is not replayed
	// once it succeeded, only sent again before a step built from it.
	previewOnly bool

	// Filled by the sends (under load.mu).
	acked     bool   // a success during the load
	answer    []byte // the first success answer
	result    string // its effect
	conflicts int
	problems  []string
}

// newKeyed is a write of op with a fresh idempotency key in its body.
func newKeyed(op, method, path string, body map[string]any, effect func([]byte) string) *keyedWrite {
	w := &keyedWrite{op: op, method: method, path: path, body: body, effect: effect, key: uuid.NewString()}
	body["idempotencyKey"] = w.key
	return w
}

// field is an effect reader: the string at a path of the answer's data.
func field(path ...string) func([]byte) string {
	return func(raw []byte) string {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return "unreadable answer"
		}
		v = v.(map[string]any)["data"]
		for _, p := range path {
			m, ok := v.(map[string]any)
			if !ok {
				return "missing " + p
			}
			v = m[p]
		}
		return fmt.Sprint(v)
	}
}

func succeeded(code int) bool { return code >= 200 && code < 300 }

// send sends the write once and records a success's effect.
func (l *load) send(ctx context.Context, w *keyedWrite, underLoad bool) int {
	code, raw := l.do(ctx, w.op, w.method, w.path, w.body)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case succeeded(code):
		r := w.effect(raw)
		if w.answer == nil {
			w.answer, w.result = raw, r
		} else if r != w.result {
			w.problems = append(w.problems, fmt.Sprintf("%s %s: answers disagree on the effect: %s and %s (%d %.300s)", w.op, w.key, w.result, r, code, raw))
		}
		if underLoad {
			w.acked = true
		}
	case code == http.StatusConflict:
		w.conflicts++
	}
	return code
}

// twice sends the write twice at once with its key; true when it
// succeeded.
func (l *load) twice(ctx context.Context, w *keyedWrite) bool {
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); l.send(ctx, w, true) }()
	}
	wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return w.answer != nil
}

// chain is a scenario: writes each built from the answers of the ones
// before it (a menu, then items on it, then publishing it).
type chain struct {
	kind string
	// steps build the writes in order; a step answering nil cannot be
	// built now (a read it needs failed).
	steps  []func(ctx context.Context) *keyedWrite
	writes []*keyedWrite
	// check is the scenario's own effect check, after the replay.
	check func(ctx context.Context, k *checker, c *chain) []string
	// done, when set, runs when the chain stops under load and after its
	// replay.
	done func()
	// head and afterSeq are the webhook scenario's feed positions: the
	// head before its endpoint existed and where its replay starts.
	head, afterSeq int64
}

// runChain builds and sends the chain's next writes until one does not
// succeed; true when all did.
func (l *load) runChain(ctx context.Context, c *chain) bool {
	if c.done != nil {
		defer c.done()
	}
	for len(c.writes) < len(c.steps) && ctx.Err() == nil {
		w := c.steps[len(c.writes)](ctx)
		if w == nil {
			return false
		}
		l.mu.Lock()
		c.writes = append(c.writes, w)
		l.mu.Unlock()
		if !l.twice(ctx, w) {
			return false
		}
	}
	return len(c.writes) == len(c.steps)
}

// replayChain sends every write of the chain once more with its key, the
// faults over, then finishes the chain: an acknowledged write must succeed
// again with the same effect; one never acknowledged must now succeed (or
// meet a legitimate conflict).
func (l *load) replayChain(ctx context.Context, c *chain) []string {
	var problems []string
	for i := 0; i < len(c.steps); i++ {
		if i == len(c.writes) {
			w := c.steps[i](ctx)
			if w == nil {
				return append(problems, fmt.Sprintf("%s: step %d could not be built after the faults", c.kind, i+1))
			}
			c.writes = append(c.writes, w)
			l.twice(ctx, w)
		}
		w := c.writes[i]
		if i == 0 && w.previewOnly && w.answer == nil {
			// The scenario wrote nothing, and what it previewed (a day's
			// source) went to another scenario.
			return nil
		}
		if w.previewOnly {
			if w.answer == nil || i+1 == len(c.writes) {
				w.answer = nil
				if !l.twice(ctx, w) {
					return append(problems, fmt.Sprintf("%s: %s failed after the faults", c.kind, w.op))
				}
			}
			continue
		}
		wasAcked, before := w.acked, w.result
		// A 409 may be a concurrent send of the same key still in
		// progress, a 503 the service's breaker not yet closed: a few
		// more tries. A legitimate conflict stays a conflict.
		var code int
		for attempt := 0; attempt < 4; attempt++ {
			code = l.send(ctx, w, false)
			if code != http.StatusServiceUnavailable && (code != http.StatusConflict || w.conflictOK) {
				break
			}
			sleep(ctx, 250*time.Millisecond)
		}
		switch {
		case succeeded(code) && wasAcked && w.result != before:
			problems = append(problems, fmt.Sprintf("replay of %s %s: effect %s, first answer %s", w.op, w.key, w.result, before))
		case succeeded(code):
		case code == http.StatusConflict && w.conflictOK && !wasAcked:
			return append(problems, w.problems...) // another writer won: the chain ends here
		default:
			problems = append(problems, fmt.Sprintf("replay of %s %s (acknowledged %v) answered %d", w.op, w.key, wasAcked, code))
		}
		problems = append(problems, w.problems...)
		if !succeeded(code) {
			return problems
		}
	}
	return problems
}

// replayAll replays every chain, as many at once as there were partner
// clients.
func (l *load) replayAll(ctx context.Context, clients int) []string {
	todo := make(chan *chain)
	var mu sync.Mutex
	var problems []string
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range todo {
				p := l.replayChain(ctx, c)
				mu.Lock()
				problems = append(problems, p...)
				mu.Unlock()
			}
		}()
	}
	for _, c := range l.chains {
		todo <- c
	}
	close(todo)
	wg.Wait()
	return problems
}
