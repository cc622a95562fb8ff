package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"partnerapi.dev/pkg/fault"
	"partnerapi.dev/services/catalogimport/internal/domain"
	"partnerapi.dev/services/catalogimport/internal/store"
)

var newDraft = map[string]any{"mode": "new_draft"}

func existingDraft(menuID string) map[string]any {
	return map[string]any{"mode": "existing_draft", "menuId": menuID}
}

// plan answers the plan's data, which must be 200.
func (e *env) plan(target, doc any) map[string]any {
	e.t.Helper()
	status, raw := e.do(http.MethodPost, base(helsinki)+"/plan", helsinki, map[string]any{"target": target, "document": doc})
	if status != http.StatusOK {
		e.t.Fatalf("plan: %d %s", status, raw)
	}
	return data(e.t, raw)
}

func applyBody(target, doc any, hash any, key string) map[string]any {
	return map[string]any{"target": target, "document": doc, "expectedPlanHash": hash, "idempotencyKey": key, "confirmed": true}
}

func (e *env) apply(target, doc any, hash any, key string) (int, []byte) {
	e.t.Helper()
	return e.do(http.MethodPost, base(helsinki)+"/apply", helsinki, applyBody(target, doc, hash, key))
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
func (e *env) importCafe() map[string]any {
	e.t.Helper()
	p := e.plan(newDraft, cafe(e.t))
	status, raw := e.apply(newDraft, cafe(e.t), p["planHash"], uuid.NewString())
	if status != http.StatusCreated {
		e.t.Fatalf("apply: %d %s", status, raw)
	}
	return data(e.t, raw)
}

func refsOf(v any) int { return len(v.(map[string]any)) }

func TestApplyTheExampleIntoANewDraft(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	p := e.plan(newDraft, cafe(t))
	if p["valid"] != true {
		t.Fatalf("plan: %v", p)
	}
	key := uuid.NewString()
	status, raw := e.apply(newDraft, cafe(t), p["planHash"], key)
	if status != http.StatusCreated {
		t.Fatalf("%d %s", status, raw)
	}
	a := data(t, raw)
	if created, _ := json.Marshal(a["created"]); string(created) != mustJSON(p["creates"]) {
		t.Fatalf("created %s, planned %s", created, mustJSON(p["creates"]))
	}
	ids := a["ids"].(map[string]any)
	for kind, want := range map[string]int{"menu": 1, "menuCategories": 3, "existingMenuCategories": 0, "menuItems": 5, "optionGroups": 2,
		"options": 5, "productCategories": 2, "products": 3, "combos": 2} {
		if got := refsOf(ids[kind]); got != want {
			t.Errorf("ids.%s has %d refs, want %d", kind, got, want)
		}
	}
	menu := a["menu"].(map[string]any)
	if a["replayed"] != false || menu["isPosMenu"] != false || menu["isOnlineMenu"] != false || menu["itemCount"] != float64(5) || menu["name"] != "Café Aalto spring menu" {
		t.Fatalf("answer %s", raw)
	}
	menuID := menu["menuId"].(string)
	if ids["menu"].(map[string]any)["spring-menu"] != menuID || a["actionId"] != domain.BatchID(client, helsinki, key) {
		t.Fatalf("menu id or action id: %s", raw)
	}

	// The replay answers the same, marked replayed, and writes nothing.
	menusBefore := e.count(`SELECT count(*) FROM menus.menus`)
	status, again := e.apply(newDraft, cafe(t), p["planHash"], key)
	if status != http.StatusCreated || data(t, again)["replayed"] != true || mustJSON(data(t, again)["ids"]) != mustJSON(ids) {
		t.Fatalf("replay: %d %s", status, again)
	}
	// The same key with another body is a conflict.
	changed := cafe(t)
	changed["menu"].(map[string]any)["name"] = "Café Aalto summer menu"
	op := e.plan(newDraft, changed)
	if status, raw := e.apply(newDraft, changed, op["planHash"], key); status != http.StatusConflict {
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
	wantData := mustJSON(map[string]any{"actionId": a["actionId"], "targetMode": "new_draft", "menu": a["menu"], "created": a["created"]})
	if len(events) != 1 || events[0].Type != "catalog_import.applied" || events[0].RestaurantID != helsinki {
		t.Fatalf("events %+v", events)
	}
	var gotData any
	if err := json.Unmarshal([]byte(events[0].Data), &gotData); err != nil || mustJSON(gotData) != wantData {
		t.Fatalf("event data %s, want %s", events[0].Data, wantData)
	}
	if n := e.count(`SELECT count(*) FROM menus.outbox_events WHERE type = 'menu.created'`); n != 1 {
		t.Fatalf("%d menu.created events in the menus service", n)
	}

	// Who applied what is recorded with the key.
	rec, err := e.store.AppliedImports(context.Background(), helsinki)
	if err != nil || len(rec) != 1 {
		t.Fatalf("records %+v %v", rec, err)
	}
	if r := rec[0]; r.ClientID != client || r.UserID != user || r.PlanHash != p["planHash"] || r.MenuID != menuID || r.IdempotencyKey != key || r.TargetMode != "new_draft" {
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
	tg := data(t, raw)
	counts := map[string]float64{}
	for _, c := range tg["categories"].([]any) {
		c := c.(map[string]any)
		counts[c["name"].(string)] = c["itemCount"].(float64)
	}
	if tg["canAddCatalogEntities"] != true || counts["Coffee"] != 2 || counts["Pastries"] != 2 || counts["Breakfast"] != 1 {
		t.Fatalf("target %s", raw)
	}
	if status, _ := e.do(http.MethodGet, base(helsinki)+"/targets/"+uuid.NewString(), helsinki, nil); status != http.StatusNotFound {
		t.Fatalf("unknown menu: %d", status)
	}
	if status, _ := e.do(http.MethodGet, base(other)+"/targets/"+menuID, other, nil); status != http.StatusNotFound {
		t.Fatalf("another restaurant's menu: %d", status)
	}
}

func mustJSON(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
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
	menuID := first["menu"].(map[string]any)["menuId"].(string)
	coffee := first["ids"].(map[string]any)["menuCategories"].(map[string]any)["coffee"].(string)
	doc := addToDraft(coffee)
	p := e.plan(existingDraft(menuID), doc)
	tgt := p["target"].(map[string]any)
	if p["valid"] != true || tgt["menuId"] != menuID || tgt["previousItemCount"] != float64(5) || tgt["previousCategoryCount"] != float64(3) || p["menuName"] != "Café Aalto spring menu" {
		t.Fatalf("plan %v", p)
	}
	status, raw := e.apply(existingDraft(menuID), doc, p["planHash"], uuid.NewString())
	if status != http.StatusOK {
		t.Fatalf("%d %s", status, raw)
	}
	a := data(t, raw)
	ids := a["ids"].(map[string]any)
	if ids["existingMenuCategories"].(map[string]any)["coffee"] != coffee || refsOf(ids["menuItems"]) != 2 || a["menu"].(map[string]any)["itemCount"] != float64(7) {
		t.Fatalf("answer %s", raw)
	}
	if c := a["created"].(map[string]any); c["newMenus"] != float64(0) || c["menuItems"] != float64(2) {
		t.Fatalf("created %v", c)
	}
}

// A plan reviewed before the draft changed is not applied: 409, nothing written.
func TestDraftChangedBetweenPlanAndApply(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	first := e.importCafe()
	menuID := first["menu"].(map[string]any)["menuId"].(string)
	coffee := first["ids"].(map[string]any)["menuCategories"].(map[string]any)["coffee"].(string)
	reviewed := e.plan(existingDraft(menuID), addToDraft(coffee))

	// Another import changes the draft after the review.
	doc := addToDraft(coffee)
	doc["menuItems"] = doc["menuItems"].([]any)[:1]
	meanwhile := e.plan(existingDraft(menuID), doc)
	if status, raw := e.apply(existingDraft(menuID), doc, meanwhile["planHash"], uuid.NewString()); status != http.StatusOK {
		t.Fatalf("the other import: %d %s", status, raw)
	}
	items := e.count(`SELECT count(*) FROM menus.items`)
	status, raw := e.apply(existingDraft(menuID), addToDraft(coffee), reviewed["planHash"], uuid.NewString())
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
	if fresh["planHash"] == reviewed["planHash"] {
		t.Fatal("the draft changed but the plan hash did not")
	}
}

// A POS or online menu is no draft: the plan says so, apply refuses it.
func TestApplyIntoAPublishedMenuIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	first := e.importCafe()
	menu := first["menu"].(map[string]any)
	menuID := menu["menuId"].(string)
	for _, selection := range []string{"pos", "online"} {
		status, raw := e.menus(http.MethodPut, "/v1/restaurants/"+helsinki+"/menus/"+selection, helsinki, map[string]any{
			"menuId": menuID, "expectedCategoryCount": menu["categoryCount"], "expectedItemCount": menu["itemCount"],
			"expectedCurrent" + map[string]string{"pos": "Pos", "online": "Online"}[selection] + "MenuId": nil,
			"idempotencyKey": uuid.NewString(), "confirmed": true,
		})
		if status != http.StatusOK {
			t.Fatalf("set %s menu: %d %s", selection, status, raw)
		}
		coffee := first["ids"].(map[string]any)["menuCategories"].(map[string]any)["coffee"].(string)
		p := e.plan(existingDraft(menuID), addToDraft(coffee))
		errs := p["errors"].([]any)
		if p["valid"] != false || len(errs) != 1 || errs[0].(map[string]any)["code"] != "target_not_draft" {
			t.Fatalf("plan into the %s menu: %v", selection, p)
		}
		status, raw = e.apply(existingDraft(menuID), addToDraft(coffee), p["planHash"], uuid.NewString())
		if status != http.StatusConflict || !strings.Contains(string(raw), "no longer an inactive draft") {
			t.Fatalf("apply into the %s menu: %d %s", selection, status, raw)
		}
		_, raw = e.do(http.MethodGet, base(helsinki)+"/targets/"+menuID, helsinki, nil)
		if data(t, raw)["canAddCatalogEntities"] != false {
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
	status, raw := e.apply(newDraft, cafe(t), p["planHash"], key)
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
	status, raw = e.apply(newDraft, cafe(t), p["planHash"], key)
	if status != http.StatusCreated || data(t, raw)["replayed"] != false {
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
	menuID := first["menu"].(map[string]any)["menuId"].(string)
	coffee := first["ids"].(map[string]any)["menuCategories"].(map[string]any)["coffee"].(string)
	p := e.plan(existingDraft(menuID), addToDraft(coffee))
	statuses := make([]int, 5)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() {
			statuses[i], _ = e.apply(existingDraft(menuID), addToDraft(coffee), p["planHash"], uuid.NewString())
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
	menuID := first["menu"].(map[string]any)["menuId"].(string)
	coffee := first["ids"].(map[string]any)["menuCategories"].(map[string]any)["coffee"].(string)
	p := e.plan(existingDraft(menuID), addToDraft(coffee))
	h := *e.h
	h.Imports = &stopsAfterMenus{Store: e.store}
	e.app = h.App(nil)
	key := uuid.NewString()
	if status, raw := e.apply(existingDraft(menuID), addToDraft(coffee), p["planHash"], key); status != http.StatusServiceUnavailable {
		t.Fatalf("stopped apply: %d %s", status, raw)
	}
	if n := e.count(`SELECT count(*) FROM menus.items`); n != 7 {
		t.Fatalf("the menus service did not commit: %d items", n)
	}
	// The draft moved (our own write), yet the retry is the same import.
	status, raw := e.apply(existingDraft(menuID), addToDraft(coffee), p["planHash"], key)
	if status != http.StatusOK {
		t.Fatalf("retry: %d %s", status, raw)
	}
	a := data(t, raw)
	if n := e.count(`SELECT count(*) FROM menus.items`); n != 7 {
		t.Fatalf("the retry wrote again: %d items", n)
	}
	var stored int64
	for ref, id := range a["ids"].(map[string]any)["menuItems"].(map[string]any) {
		stored += e.count(`SELECT count(*) FROM menus.items WHERE id = ? AND name = ?`, id, map[string]string{"iced-latte": "Iced latte", "espresso": "Espresso"}[ref])
	}
	if stored != 2 || a["actionId"] != domain.BatchID(client, helsinki, key) {
		t.Fatalf("answer %s does not name the stored items", raw)
	}
	if n := e.count(`SELECT count(*) FROM catalogimport.applied_imports WHERE action_id = ?`, a["actionId"]); n != 1 {
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
	answers := make([]map[string]any, 5)
	statuses := make([]int, 5)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			var raw []byte
			statuses[i], raw = e.apply(newDraft, cafe(t), p["planHash"], key)
			var env struct {
				Data map[string]any `json:"data"`
			}
			_ = json.Unmarshal(raw, &env) // checked below, on the test's goroutine
			answers[i] = env.Data
		})
	}
	wg.Wait()
	replays := 0
	for i, a := range answers {
		if statuses[i] != http.StatusCreated || a["actionId"] != answers[0]["actionId"] || mustJSON(a["ids"]) != mustJSON(answers[0]["ids"]) {
			t.Fatalf("answer %d: %d %v", i, statuses[i], a)
		}
		if a["replayed"] == true {
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
	status, first := e.apply(newDraft, cafe(t), p["planHash"], strings.ToUpper(key))
	if status != http.StatusCreated {
		t.Fatalf("upper case: %d %s", status, first)
	}
	status, again := e.apply(newDraft, cafe(t), p["planHash"], key)
	if status != http.StatusCreated || data(t, again)["replayed"] != true || data(t, again)["actionId"] != data(t, first)["actionId"] {
		t.Fatalf("lower-case repeat: %d %s", status, again)
	}
	if n := e.count(`SELECT count(*) FROM applied_imports`); n != 1 {
		t.Fatalf("%d imports applied", n)
	}
}
