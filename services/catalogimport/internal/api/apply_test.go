package api_test

import (
	"context"
	"net/http"
	"partnerapi.dev/pkg/servicetest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"partnerapi.dev/pkg/fault"
	"partnerapi.dev/services/catalogimport/internal/domain"
	"partnerapi.dev/services/catalogimport/internal/store"
)

var newDraft = importTarget{Mode: "new_draft"}

func existingDraft(menuID string) importTarget {
	return importTarget{Mode: "existing_draft", MenuID: menuID}
}

// planAs answers the plan's data, which must be 200.
func planAs[T any](e *env, target, doc any) T {
	e.t.Helper()
	return must[T](e, http.StatusOK, http.MethodPost, base(helsinki)+"/plan", helsinki, planRequest{Target: target, Document: doc})
}

// plan answers the plan's data (naming set A), which must be 200.
func (e *env) plan(target, doc any) planAnswer {
	e.t.Helper()
	return planAs[planAnswer](e, target, doc)
}

func (e *env) apply(target, doc any, hash, key string) (int, []byte) {
	e.t.Helper()
	return e.do(http.MethodPost, base(helsinki)+"/apply", helsinki,
		applyRequest{Target: target, Document: doc, ExpectedPlanHash: hash, IdempotencyKey: key, Confirmed: true})
}

// count runs a count query on the test database (schema-qualified).
func (e *env) count(query string, args ...any) int64 {
	e.t.Helper()
	var n int64
	if err := e.db.Gorm.Raw(query, args...).Scan(&n).Error; err != nil {
		e.t.Fatal(err)
	}
	return n
}

// importCafe applies the example into a new draft and answers the apply's data.
func (e *env) importCafe() applied {
	e.t.Helper()
	p := e.plan(newDraft, cafe(e.t))
	status, raw := e.apply(newDraft, cafe(e.t), p.PlanHash, uuid.NewString())
	if status != http.StatusCreated {
		e.t.Fatalf("apply: %d %s", status, raw)
	}
	return data[applied](e.t, raw)
}

// coffeeOf is the id of the example's coffee category in its apply answer.
func coffeeOf(t testing.TB, a applied) string {
	t.Helper()
	id := a.IDs["menuCategories"]["coffee"]
	if id == "" {
		t.Fatalf("no coffee category in %v", a.IDs)
	}
	return id
}

func TestApplyTheExampleIntoANewDraft(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	p := e.plan(newDraft, cafe(t))
	if !p.Valid {
		t.Fatalf("plan: %+v", p)
	}
	key := uuid.NewString()
	status, raw := e.apply(newDraft, cafe(t), p.PlanHash, key)
	if status != http.StatusCreated {
		t.Fatalf("%d %s", status, raw)
	}
	a := data[applied](t, raw)
	if a.Created != p.Creates {
		t.Fatalf("created %+v, planned %+v", a.Created, p.Creates)
	}
	for kind, want := range map[string]int{"menu": 1, "menuCategories": 3, "existingMenuCategories": 0, "menuItems": 5, "optionGroups": 2,
		"options": 5, "productCategories": 2, "products": 3, "combos": 2} {
		if refs, ok := a.IDs[kind]; !ok || refs == nil || len(refs) != want {
			t.Errorf("ids.%s is %v, want %d refs", kind, refs, want)
		}
	}
	if a.Replayed || a.Menu.IsPosMenu || a.Menu.IsOnlineMenu || a.Menu.ItemCount != 5 || a.Menu.Name != "Café Aalto spring menu" {
		t.Fatalf("answer %s", raw)
	}
	menuID := a.Menu.MenuID
	if a.IDs["menu"]["spring-menu"] != menuID || a.ActionID != domain.BatchID(client, helsinki, key) {
		t.Fatalf("menu id or action id: %s", raw)
	}

	// The replay answers the same, marked replayed, and writes nothing.
	menusBefore := e.count(`SELECT count(*) FROM menus.menus`)
	status, again := e.apply(newDraft, cafe(t), p.PlanHash, key)
	if status != http.StatusCreated {
		t.Fatalf("replay: %d %s", status, again)
	}
	if r := data[applied](t, again); !r.Replayed || !reflect.DeepEqual(r.IDs, a.IDs) {
		t.Fatalf("replay: %d %s", status, again)
	}
	// The same key with another body is a conflict.
	changed := cafe(t)
	changed["menu"].(map[string]any)["name"] = "Café Aalto summer menu"
	op := e.plan(newDraft, changed)
	if status, raw := e.apply(newDraft, changed, op.PlanHash, key); status != http.StatusConflict {
		t.Fatalf("same key, other body: %d %s", status, raw)
	}
	if n := e.count(`SELECT count(*) FROM menus.menus`); n != menusBefore {
		t.Fatalf("replay and conflict wrote menus: %d -> %d", menusBefore, n)
	}

	// One catalog_import.applied, recorded with the import (none for the
	// replay or the conflict), and the menus service's menu.created.
	var events []struct{ Type, RestaurantID, Data string }
	if err := e.db.Gorm.Raw(`SELECT type, restaurant_id, data::text AS data FROM catalogimport.outbox_events ORDER BY pos`).Scan(&events).Error; err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].Type != "catalog_import.applied" || events[0].RestaurantID != helsinki {
		t.Fatalf("events %+v", events)
	}
	wantData := importEvent{ActionID: a.ActionID, TargetMode: "new_draft", Menu: a.Menu, Created: a.Created}
	if got := servicetest.Strict[importEvent](t, []byte(events[0].Data)); got != wantData {
		t.Fatalf("event data %s, want %+v", events[0].Data, wantData)
	}
	if n := e.count(`SELECT count(*) FROM menus.outbox_events WHERE type = 'menu.created'`); n != 1 {
		t.Fatalf("%d menu.created events in the menus service", n)
	}

	// Who applied what is recorded with the key.
	rec, err := e.store.AppliedImports(context.Background(), helsinki)
	if err != nil || len(rec) != 1 {
		t.Fatalf("records %+v %v", rec, err)
	}
	if r := rec[0]; r.ClientID != client || r.UserID != user || r.PlanHash != p.PlanHash || r.MenuID != menuID || r.IdempotencyKey != key || r.TargetMode != "new_draft" {
		t.Fatalf("record %+v", r)
	}
	if n := e.count(`SELECT count(*) FROM catalogimport.pending_batches`); n != 0 {
		t.Fatalf("%d pending batches after a recorded import", n)
	}

	// The new draft as a target: inactive, its categories with their items.
	status, raw = e.do(http.MethodGet, base(helsinki)+"/targets/"+menuID, helsinki, nil)
	if status != http.StatusOK {
		t.Fatalf("target: %d %s", status, raw)
	}
	tg := data[target](t, raw)
	counts := map[string]int64{}
	for _, c := range tg.Categories {
		counts[c.Name] = c.ItemCount
	}
	if !tg.CanAddCatalogEntities || counts["Coffee"] != 2 || counts["Pastries"] != 2 || counts["Breakfast"] != 1 {
		t.Fatalf("target %s", raw)
	}
	if status, _ := e.do(http.MethodGet, base(helsinki)+"/targets/"+uuid.NewString(), helsinki, nil); status != http.StatusNotFound {
		t.Fatalf("unknown menu: %d", status)
	}
	if status, _ := e.do(http.MethodGet, base(other)+"/targets/"+menuID, other, nil); status != http.StatusNotFound {
		t.Fatalf("another restaurant's menu: %d", status)
	}
}

// addToDraft is a document adding two items to the example's coffee
// category of an existing draft.
func addToDraft(coffeeID string) map[string]any {
	return map[string]any{
		"menu":                   map[string]any{"ref": "draft"},
		"existingMenuCategories": []any{map[string]any{"ref": "coffee", "categoryId": coffeeID}},
		"menuItems": []any{
			map[string]any{"ref": "iced-latte", "categoryRef": "coffee", "name": "Iced latte", "basePriceMinor": 480, "visible": true, "productType": "drink"},
			map[string]any{"ref": "espresso", "categoryRef": "coffee", "name": "Espresso", "basePriceMinor": 300, "visible": true, "productType": "drink"},
		},
	}
}

func TestApplyIntoAnExistingDraft(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	first := e.importCafe()
	menuID := first.Menu.MenuID
	coffee := coffeeOf(t, first)
	doc := addToDraft(coffee)
	p := e.plan(existingDraft(menuID), doc)
	tgt := p.Target
	if !p.Valid || tgt.MenuID == nil || *tgt.MenuID != menuID || tgt.PreviousItemCount != 5 || tgt.PreviousCategoryCount != 3 || p.MenuName != "Café Aalto spring menu" {
		t.Fatalf("plan %+v", p)
	}
	status, raw := e.apply(existingDraft(menuID), doc, p.PlanHash, uuid.NewString())
	if status != http.StatusOK {
		t.Fatalf("%d %s", status, raw)
	}
	a := data[applied](t, raw)
	if a.IDs["existingMenuCategories"]["coffee"] != coffee || a.IDs["menuItems"] == nil || len(a.IDs["menuItems"]) != 2 || a.Menu.ItemCount != 7 {
		t.Fatalf("answer %s", raw)
	}
	if c := a.Created; c.NewMenus != 0 || c.MenuItems != 2 {
		t.Fatalf("created %+v", c)
	}
}

// A plan reviewed before the draft changed is not applied: 409, nothing written.
func TestDraftChangedBetweenPlanAndApply(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	first := e.importCafe()
	menuID := first.Menu.MenuID
	coffee := coffeeOf(t, first)
	reviewed := e.plan(existingDraft(menuID), addToDraft(coffee))

	// Another import changes the draft after the review.
	doc := addToDraft(coffee)
	doc["menuItems"] = doc["menuItems"].([]any)[:1]
	meanwhile := e.plan(existingDraft(menuID), doc)
	if status, raw := e.apply(existingDraft(menuID), doc, meanwhile.PlanHash, uuid.NewString()); status != http.StatusOK {
		t.Fatalf("the other import: %d %s", status, raw)
	}
	items := e.count(`SELECT count(*) FROM menus.items`)
	status, raw := e.apply(existingDraft(menuID), addToDraft(coffee), reviewed.PlanHash, uuid.NewString())
	if status != http.StatusConflict || !strings.Contains(string(raw), "Plan again") {
		t.Fatalf("stale plan: %d %s", status, raw)
	}
	if n := e.count(`SELECT count(*) FROM menus.items`); n != items {
		t.Fatalf("a stale plan wrote items: %d -> %d", items, n)
	}
	if n := e.count(`SELECT count(*) FROM catalogimport.applied_imports`); n != 2 {
		t.Fatalf("%d applied imports, want 2", n)
	}
	// Planning again gives the hash to apply.
	fresh := e.plan(existingDraft(menuID), addToDraft(coffee))
	if fresh.PlanHash == reviewed.PlanHash {
		t.Fatal("the draft changed but the plan hash did not")
	}
}

// A POS or online menu is no draft: the plan says so, apply refuses it.
func TestApplyIntoAPublishedMenuIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	first := e.importCafe()
	menu := first.Menu
	menuID := menu.MenuID
	for _, selection := range []string{"pos", "online"} {
		status, raw := e.menus(http.MethodPut, "/v1/restaurants/"+helsinki+"/menus/"+selection, helsinki, map[string]any{
			"menuId": menuID, "expectedCategoryCount": menu.CategoryCount, "expectedItemCount": menu.ItemCount,
			"expectedCurrent" + map[string]string{"pos": "Pos", "online": "Online"}[selection] + "MenuId": nil,
			"idempotencyKey": uuid.NewString(), "confirmed": true,
		})
		if status != http.StatusOK {
			t.Fatalf("set %s menu: %d %s", selection, status, raw)
		}
		coffee := coffeeOf(t, first)
		p := e.plan(existingDraft(menuID), addToDraft(coffee))
		if p.Valid || len(p.Errors) != 1 || p.Errors[0].Code != "target_not_draft" {
			t.Fatalf("plan into the %s menu: %+v", selection, p)
		}
		status, raw = e.apply(existingDraft(menuID), addToDraft(coffee), p.PlanHash, uuid.NewString())
		if status != http.StatusConflict || !strings.Contains(string(raw), "no longer an inactive draft") {
			t.Fatalf("apply into the %s menu: %d %s", selection, status, raw)
		}
		_, raw = e.do(http.MethodGet, base(helsinki)+"/targets/"+menuID, helsinki, nil)
		if data[target](t, raw).CanAddCatalogEntities {
			t.Fatalf("target of the %s menu: %s", selection, raw)
		}
	}
	if n := e.count(`SELECT count(*) FROM menus.items`); n != 5 {
		t.Fatalf("%d items, want the example's 5", n)
	}
}

// An apply that fails inside the menus service's transaction writes nothing
// anywhere; the same key succeeds once the failure is gone.
func TestApplyFailingHalfwayWritesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	exec := func(sql string) {
		t.Helper()
		if err := e.db.Gorm.Exec(sql).Error; err != nil {
			t.Fatal(err)
		}
	}
	exec(`CREATE FUNCTION menus.refuse_item() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.name = 'Oat porridge with lingonberries' THEN RAISE EXCEPTION 'refused by the test'; END IF;
  RETURN NEW;
END $$`)
	exec(`CREATE TRIGGER refuse_item BEFORE INSERT ON menus.items FOR EACH ROW EXECUTE FUNCTION menus.refuse_item()`)
	p := e.plan(newDraft, cafe(t))
	key := uuid.NewString()
	status, raw := e.apply(newDraft, cafe(t), p.PlanHash, key)
	if status != http.StatusServiceUnavailable || !strings.Contains(string(raw), "capability_disabled") {
		t.Fatalf("failing apply: %d %s", status, raw)
	}
	for _, table := range []string{"menus.menus", "menus.categories", "menus.items", "menus.option_groups", "menus.options",
		"menus.product_categories", "menus.products", "menus.combos", "menus.menu_items", "catalogimport.applied_imports", "catalogimport.idempotency_keys",
		"catalogimport.outbox_events", "menus.outbox_events"} {
		if n := e.count(`SELECT count(*) FROM ` + table); n != 0 {
			t.Errorf("%s has %d rows after a failed apply", table, n)
		}
	}
	exec(`DROP TRIGGER refuse_item ON menus.items`)
	status, raw = e.apply(newDraft, cafe(t), p.PlanHash, key)
	if status != http.StatusCreated || data[applied](t, raw).Replayed {
		t.Fatalf("retry: %d %s", status, raw)
	}
	if n := e.count(`SELECT count(*) FROM menus.items`); n != 5 {
		t.Fatalf("%d items after the retry, want 5", n)
	}
	if n := e.count(`SELECT count(*) FROM catalogimport.outbox_events`); n != 1 {
		t.Fatalf("%d import events after the retry, want 1", n)
	}
}

// Five applies of one plan into one draft at once, each with its own key:
// one writes, the others are told the draft changed.
func TestConcurrentAppliesOfOnePlan(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	first := e.importCafe()
	menuID := first.Menu.MenuID
	coffee := coffeeOf(t, first)
	p := e.plan(existingDraft(menuID), addToDraft(coffee))
	statuses := make([]int, 5)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() {
			statuses[i], _ = e.apply(existingDraft(menuID), addToDraft(coffee), p.PlanHash, uuid.NewString())
		})
	}
	wg.Wait()
	ok, conflicts := 0, 0
	for _, s := range statuses {
		switch s {
		case http.StatusOK:
			ok++
		case http.StatusConflict:
			conflicts++
		}
	}
	if ok != 1 || conflicts != 4 {
		t.Fatalf("statuses %v, want one 200 and four 409", statuses)
	}
	if n := e.count(`SELECT count(*) FROM menus.items`); n != 7 {
		t.Fatalf("%d items, want 5 + 2", n)
	}
	if n := e.count(`SELECT count(*) FROM catalogimport.applied_imports`); n != 2 {
		t.Fatalf("%d applied imports, want 2", n)
	}
}

// stopsAfterMenus is the store of a process that stops after the menus
// service committed a batch and before its own record committed.
type stopsAfterMenus struct {
	*store.Store
	stopped bool
}

func (s *stopsAfterMenus) Apply(ctx context.Context, k domain.ApplyKey, write func(context.Context) (domain.AppliedImport, error)) (domain.Stored, error) {
	if s.stopped {
		return s.Store.Apply(ctx, k, write)
	}
	s.stopped = true
	if _, err := write(ctx); err != nil {
		return domain.Stored{}, err
	}
	// The partner sees an outage (or no answer at all).
	return domain.Stored{}, fault.New(fault.Unavailable, "the database went away before the record committed")
}

// A retry after such a stop writes nothing twice: the same batch id is
// resent and the menus service answers what it stored.
func TestRetryAfterAStopBetweenTheTwoDatabases(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	first := e.importCafe()
	menuID := first.Menu.MenuID
	coffee := coffeeOf(t, first)
	p := e.plan(existingDraft(menuID), addToDraft(coffee))
	h := *e.h
	h.Imports = &stopsAfterMenus{Store: e.store}
	e.app = h.App(nil)
	key := uuid.NewString()
	if status, raw := e.apply(existingDraft(menuID), addToDraft(coffee), p.PlanHash, key); status != http.StatusServiceUnavailable {
		t.Fatalf("stopped apply: %d %s", status, raw)
	}
	if n := e.count(`SELECT count(*) FROM menus.items`); n != 7 {
		t.Fatalf("the menus service did not commit: %d items", n)
	}
	// The draft moved (our own write), yet the retry is the same import.
	status, raw := e.apply(existingDraft(menuID), addToDraft(coffee), p.PlanHash, key)
	if status != http.StatusOK {
		t.Fatalf("retry: %d %s", status, raw)
	}
	a := data[applied](t, raw)
	if n := e.count(`SELECT count(*) FROM menus.items`); n != 7 {
		t.Fatalf("the retry wrote again: %d items", n)
	}
	var stored int64
	for ref, id := range a.IDs["menuItems"] {
		stored += e.count(`SELECT count(*) FROM menus.items WHERE id = ? AND name = ?`, id, map[string]string{"iced-latte": "Iced latte", "espresso": "Espresso"}[ref])
	}
	if stored != 2 || a.ActionID != domain.BatchID(client, helsinki, key) {
		t.Fatalf("answer %s does not name the stored items", raw)
	}
	if n := e.count(`SELECT count(*) FROM catalogimport.applied_imports WHERE action_id = ?`, a.ActionID); n != 1 {
		t.Fatalf("%d records of the import", n)
	}
}

// Five applies with the same key at once: one write, every answer the same
// import (the first, or its replay).
func TestConcurrentAppliesWithOneKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	p := e.plan(newDraft, cafe(t))
	key := uuid.NewString()
	raws := make([][]byte, 5)
	statuses := make([]int, 5)
	var wg sync.WaitGroup
	for i := range raws {
		wg.Go(func() {
			statuses[i], raws[i] = e.apply(newDraft, cafe(t), p.PlanHash, key)
		})
	}
	wg.Wait()
	// Decoded here, on the test's goroutine.
	replays := 0
	var first applied
	for i, raw := range raws {
		if statuses[i] != http.StatusCreated {
			t.Fatalf("answer %d: %d %s", i, statuses[i], raw)
		}
		a := data[applied](t, raw)
		if i == 0 {
			first = a
		}
		if a.ActionID != first.ActionID || !reflect.DeepEqual(a.IDs, first.IDs) {
			t.Fatalf("answer %d: %d %s", i, statuses[i], raw)
		}
		if a.Replayed {
			replays++
		}
	}
	if replays != 4 {
		t.Fatalf("%d replays, want 4", replays)
	}
	if n := e.count(`SELECT count(*) FROM menus.menus`); n != 1 {
		t.Fatalf("%d menus, want 1", n)
	}
}

// TestKeyInAnyCaseIsOneKey: the same key in upper and lower case is one
// key: the repeat replays the import (the request compared holds the key in
// one spelling, so it is not a 409).
func TestKeyInAnyCaseIsOneKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	p := e.plan(newDraft, cafe(t))
	key := uuid.NewString()
	status, first := e.apply(newDraft, cafe(t), p.PlanHash, strings.ToUpper(key))
	if status != http.StatusCreated {
		t.Fatalf("upper case: %d %s", status, first)
	}
	status, again := e.apply(newDraft, cafe(t), p.PlanHash, key)
	if status != http.StatusCreated {
		t.Fatalf("lower-case repeat: %d %s", status, again)
	}
	if r := data[applied](t, again); !r.Replayed || r.ActionID != data[applied](t, first).ActionID {
		t.Fatalf("lower-case repeat: %d %s", status, again)
	}
	if n := e.count(`SELECT count(*) FROM applied_imports`); n != 1 {
		t.Fatalf("%d imports applied", n)
	}
}
