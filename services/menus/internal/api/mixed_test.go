package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/contracts"
)

// The kinds of menu write a mixed round draws from. Every kind but create
// and importNew works on the round's draft.
const (
	opCreate    = "create menu"
	opImportNew = "catalog import into a new draft"
	opAdd       = "add items"
	opEdit      = "edit item"
	opImport    = "catalog import into the draft"
	opPos       = "set POS menu"
	opOnline    = "set online menu"
)

var mixedKinds = []string{opCreate, opImportNew, opAdd, opAdd, opEdit, opEdit, opImport, opPos, opPos, opOnline}

// review is what a partner saw of the draft before writing.
type review struct {
	menu     contracts.MenuSummary
	revision string
	pos      *string
	online   *string
	versions map[string]string // item id -> version
}

// mixedOp is one write of a round with its randomness drawn up front, so a
// seed replays the same requests (the interleaving is the database's).
type mixedOp struct {
	kind   string
	delay  time.Duration
	fresh  bool   // reviews again just before writing
	item   string // add: the catalog item; edit: the draft's item
	price  int64  // edit
	serial int    // idempotency key and batch id

	// What happened.
	seen   review
	status int
	body   []byte
}

func (op *mixedOp) String() string {
	return fmt.Sprintf("%s (item %s, fresh review %v) answered %d %s", op.kind, op.item, op.fresh, op.status, op.body)
}

// Writers on one draft (adding items, editing an item, importing a catalog
// into it) race the two publishing operations and each other, with creates
// and new drafts beside them. What committed must keep the menu rules:
// nothing changes on a menu once it is published, a publish happens at the
// counts it was given, every success records exactly one event and every
// conflict none, and an item's version moves by one per edit.
func TestMixedMenuWrites(t *testing.T) {
	t.Parallel()
	rng, seed := testenv.Random(t)
	rounds := testenv.Rounds(t, 25)
	e := fixtureEnv(newEnv(t))
	e.takeEvents()
	var serial atomic.Int64
	serial.Store(1_000_000)
	next := func() int { return int(serial.Add(1)) }
	for round := range rounds {
		// The round's draft: two categories and two items of its own.
		batch := newDraftBatch(batchID(next()), fmt.Sprintf("Round %d", round))
		created := e.batch(http.StatusCreated, helsinki, batch)
		draft := created.Menu.MenuID
		draftItems := []string{created.IDs["menuItems"]["salmon"], created.IDs["menuItems"]["beer"]}
		e.takeEvents()
		initial := e.review(draft, draftItems)

		ops := make([]*mixedOp, 3+rng.IntN(4))
		for i := range ops {
			op := &mixedOp{kind: mixedKinds[rng.IntN(len(mixedKinds))], delay: time.Duration(rng.IntN(3000)) * time.Microsecond,
				fresh: rng.IntN(3) == 0, serial: next()}
			switch op.kind {
			case opAdd:
				catalog := []string{itemSalmon, itemPea, itemCake, itemBeer, itemCoffee, itemSpecial}
				op.item = catalog[rng.IntN(len(catalog))]
			case opEdit:
				op.item = draftItems[rng.IntN(len(draftItems))]
				op.price = int64(100 + rng.IntN(10_000))
			}
			ops[i] = op
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, op := range ops {
			wg.Go(func() {
				<-start
				time.Sleep(op.delay)
				op.seen = initial
				if op.fresh {
					op.seen = e.review(draft, draftItems)
				}
				op.status, op.body = e.send(op, draft)
			})
		}
		close(start)
		wg.Wait()
		checkMixedRound(t, e, seed, round, draft, draftItems, initial, ops, e.takeEvents())
		if t.Failed() {
			return
		}
	}
}

func batchID(n int) string { return fmt.Sprintf("5d1e7c3a-0000-4000-8000-%012d", n) }

// review reads the draft, the selection and the draft items' versions as a
// partner does before writing.
func (e *env) review(draft string, items []string) review {
	e.t.Helper()
	target := e.target(helsinki, draft)
	listed := e.listMenus(helsinki)
	r := review{menu: target.Menu, revision: target.Revision, pos: listed.PosMenuID, online: listed.OnlineMenuID, versions: map[string]string{}}
	for _, id := range items {
		var got struct {
			Data struct {
				Version string `json:"version"`
			} `json:"data"`
		}
		status, raw := e.do(http.MethodGet, itemPath(helsinki, draft, id), helsinki, nil)
		if status != http.StatusOK || json.Unmarshal(raw, &got) != nil {
			e.t.Fatalf("inspect %s: %d %s", id, status, raw)
		}
		r.versions[id] = got.Data.Version
	}
	return r
}

// send makes the op's request from what it reviewed.
func (e *env) send(op *mixedOp, draft string) (int, []byte) {
	s := op.seen
	switch op.kind {
	case opCreate:
		return e.do(http.MethodPost, menus(helsinki), helsinki, newMenu{Name: "Created", IdempotencyKey: key(op.serial)})
	case opImportNew:
		return e.do(http.MethodPost, batchPath(helsinki), helsinki, newDraftBatch(batchID(op.serial), "New draft"))
	case opAdd:
		return e.do(http.MethodPost, items(helsinki, draft), helsinki, addBody(op.serial, s.menu.CategoryCount, s.menu.ItemCount, op.item))
	case opEdit:
		return e.do(http.MethodPatch, itemPath(helsinki, draft, op.item), helsinki,
			patchBody(op.serial, s.versions[op.item], map[string]any{"basePriceMinor": op.price}))
	case opImport:
		b := contracts.CatalogBatch{BatchID: batchID(op.serial), Document: document("Imported"),
			Target: contracts.CatalogBatchTarget{Mode: contracts.CatalogTargetExistingDraft, MenuID: &draft, ExpectedRevision: &s.revision}}
		return e.do(http.MethodPost, batchPath(helsinki), helsinki, b)
	case opPos:
		return e.do(http.MethodPut, menus(helsinki)+"/pos", helsinki,
			setBody(op.serial, draft, s.menu.CategoryCount, s.menu.ItemCount, "expectedCurrentPosMenuId", s.pos))
	default:
		return e.do(http.MethodPut, menus(helsinki)+"/online", helsinki,
			setBody(op.serial, draft, s.menu.CategoryCount, s.menu.ItemCount, "expectedCurrentOnlineMenuId", s.online))
	}
}

// answer is the union of the write answers' fields the checks read.
type answer struct {
	Data struct {
		Menu                 contracts.MenuSummary `json:"menu"`
		PreviousPosMenuID    *string               `json:"previousPosMenuId"`
		PreviousOnlineMenuID *string               `json:"previousOnlineMenuId"`
		PreviousVersion      string                `json:"previousVersion"`
		Version              string                `json:"version"`
	} `json:"data"`
}

func checkMixedRound(t *testing.T, e *env, seed uint64, round int, draft string, draftItems []string, initial review, ops []*mixedOp, events []event) {
	t.Helper()
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	// What the answers say committed.
	want := map[string]int{}  // event type (for the draft, or created) -> count
	createdIDs := []string{}  // menus created by the round
	edits := map[string]int{} // item -> successful edits
	for _, op := range ops {
		if op.status != http.StatusOK && op.status != http.StatusCreated && op.status != http.StatusConflict {
			fail("%v: only 200, 201 and 409 are expected", op)
			continue
		}
		if op.status == http.StatusConflict {
			continue
		}
		var a answer
		if err := json.Unmarshal(op.body, &a); err != nil {
			fail("%v: %v", op, err)
			continue
		}
		d := a.Data
		switch op.kind {
		case opCreate, opImportNew:
			want[contracts.EventMenuCreated]++
			createdIDs = append(createdIDs, d.Menu.MenuID)
		case opAdd, opImport:
			want[contracts.EventMenuUpdated]++
		case opEdit:
			want[contracts.EventMenuUpdated]++
			edits[op.item]++
			if d.PreviousVersion != op.seen.versions[op.item] || versionNumber(d.Version) != versionNumber(d.PreviousVersion)+1 {
				fail("%v: an edit reviewed at %s must move the version by one", op, op.seen.versions[op.item])
			}
		case opPos, opOnline:
			if d.Menu.CategoryCount != op.seen.menu.CategoryCount || d.Menu.ItemCount != op.seen.menu.ItemCount {
				fail("%v: published at %d/%d, reviewed at %d/%d", op, d.Menu.CategoryCount, d.Menu.ItemCount,
					op.seen.menu.CategoryCount, op.seen.menu.ItemCount)
			}
			previous := d.PreviousPosMenuID
			if op.kind == opOnline {
				previous = d.PreviousOnlineMenuID
			}
			if previous == nil || *previous != draft {
				want[contracts.EventMenuPublished+" "+publication(op.kind)]++
			}
		}
	}

	// What the event log says committed, in commit order (every write on
	// the draft records its event while holding the draft's lock).
	got := map[string]int{}
	published := false
	for _, ev := range events {
		id := ev.Data.Menu.MenuID
		switch {
		case ev.Type == contracts.EventMenuCreated && slices.Contains(createdIDs, id):
			got[ev.Type]++
		case id != draft:
			fail("event %s of menu %s: no write of the round touched it", ev.Type, id)
		case ev.Type == contracts.EventMenuPublished:
			published = true
			got[ev.Type+" "+ev.Data.Publication]++
		case ev.Type == contracts.EventMenuUpdated:
			if published {
				fail("menu.updated %+v after the draft was published", ev.Data)
			}
			got[ev.Type]++
		default:
			fail("unexpected event %s %+v", ev.Type, ev.Data)
		}
	}
	for _, k := range slices.Sorted(mapKeys(want, got)) {
		if want[k] != got[k] {
			fail("%d successful writes call for %d %s events; the log has %d", want[k], want[k], k, got[k])
		}
	}

	// What the rows say: each edit moved its item's version by one.
	final := e.review(draft, draftItems)
	for _, id := range draftItems {
		if d := versionNumber(final.versions[id]) - versionNumber(initial.versions[id]); d != int64(edits[id]) {
			fail("item %s: version moved by %d over %d successful edits", id, d, edits[id])
		}
	}

	if len(problems) > 0 {
		var b strings.Builder
		for _, op := range ops {
			fmt.Fprintf(&b, "\n  op: %v", op)
		}
		for _, ev := range events {
			fmt.Fprintf(&b, "\n  event: %s %+v", ev.Type, ev.Data)
		}
		t.Errorf("seed %d, round %d:\n  %s%s", seed, round, strings.Join(problems, "\n  "), b.String())
	}
}

func publication(kind string) string {
	if kind == opPos {
		return "pos"
	}
	return "online"
}

func versionNumber(v string) int64 {
	n, _ := strconv.ParseInt(strings.TrimPrefix(v, "v"), 10, 64)
	return n
}

func mapKeys(ms ...map[string]int) func(func(string) bool) {
	return func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, m := range ms {
			for k := range m {
				if !seen[k] {
					seen[k] = true
					if !yield(k) {
						return
					}
				}
			}
		}
	}
}
