package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"partnerapi.dev/services/contracts"
)

func targetPath(restaurant, menu string) string {
	return strings.NewReplacer("{restaurantId}", restaurant, "{menuId}", menu).Replace(contracts.MenusCatalogTargetPath)
}

func batchPath(restaurant string) string {
	return strings.Replace(contracts.MenusCatalogBatchPath, "{restaurantId}", restaurant, 1)
}

// document is a catalog document touching every kind of entity.
func document(menuName string) contracts.CatalogDocument {
	desc := "Creamy, with dill"
	return contracts.CatalogDocument{
		Menu: contracts.CatalogMenu{Ref: "menu", Name: menuName},
		MenuCategories: []contracts.CatalogMenuCategory{
			{Ref: "soups", Name: "Soups", Visible: true, RegulatedProductClass: "standard", DiscountPolicy: "allowed"},
			{Ref: "drinks", Name: "Drinks", Visible: true},
		},
		MenuItems: []contracts.CatalogMenuItem{
			{Ref: "salmon", CategoryRef: "soups", Name: "Salmon Soup", BasePriceMinor: 1680, Description: &desc, Visible: true,
				ProductType: "food", ShowInKitchen: true, DietaryInfo: contracts.CatalogDietaryInfo{GlutenFree: true},
				OptionGroupAssignments: []contracts.CatalogOptionGroupAssignment{{OptionGroupRef: "bread", Position: 0}}},
			{Ref: "beer", CategoryRef: "drinks", Name: "Lager 0.5", BasePriceMinor: 790, Visible: true, ProductType: "drink",
				IsAlcohol: true, AlcoholPercentage: new(4.7), Volume: new(0.5), Unit: str("l")},
		},
		OptionGroups: []contracts.CatalogOptionGroup{{Ref: "bread", Name: "Bread", MinSelections: 0, MaxSelections: 1,
			Options: []contracts.CatalogOption{{Ref: "rye", Name: "Rye bread", Visible: true}, {Ref: "white", Name: "White bread", PriceMinor: 50, Visible: true}}}},
		ProductCategories: []contracts.CatalogProductCategory{{Ref: "fish", Name: "Fish"}},
		Products:          []contracts.CatalogProduct{{Ref: "salmon-fillet", ProductCategoryRef: "fish", Name: "Salmon fillet", Unit: "kg", TrackStock: true}},
		Combos: []contracts.CatalogCombo{{Ref: "lunch", Name: "Soup and beer", PriceMinor: 2200, Visible: true,
			Components: []contracts.CatalogComboComponent{{MenuItemRef: "salmon", Quantity: 1}, {MenuItemRef: "beer", Quantity: 1}}}},
	}
}

func newDraftBatch(id, name string) contracts.CatalogBatch {
	return contracts.CatalogBatch{BatchID: id, Target: contracts.CatalogBatchTarget{Mode: contracts.CatalogTargetNewDraft}, Document: document(name)}
}

func (e *env) batch(want int, restaurant string, b any) contracts.CatalogBatchResult {
	e.t.Helper()
	status, raw := e.do(http.MethodPost, batchPath(restaurant), restaurant, b)
	if status != want {
		e.t.Fatalf("batch: %d, want %d: %s", status, want, raw)
	}
	var out struct{ Data contracts.CatalogBatchResult }
	if err := json.Unmarshal(raw, &out); err != nil {
		e.t.Fatal(err)
	}
	return out.Data
}

func (e *env) target(restaurant, menu string) contracts.CatalogTarget {
	e.t.Helper()
	status, raw := e.do(http.MethodGet, targetPath(restaurant, menu), restaurant, nil)
	if status != http.StatusOK {
		e.t.Fatalf("target: %d %s", status, raw)
	}
	var out struct{ Data contracts.CatalogTarget }
	if err := json.Unmarshal(raw, &out); err != nil {
		e.t.Fatal(err)
	}
	return out.Data
}

func (e *env) count(table string) int {
	e.t.Helper()
	var n int
	if err := e.db.Gorm.Raw("SELECT count(*) FROM " + table).Scan(&n).Error; err != nil {
		e.t.Fatal(err)
	}
	return n
}

func TestCatalogBatchNewDraft(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.Scopes = catalogScopes
	res := e.batch(http.StatusCreated, helsinki, newDraftBatch("5d1e7c3a-0000-4000-8000-000000000001", "Imported spring"))
	if res.Replayed || res.Menu.Name != "Imported spring" || res.Menu.IsPosMenu || res.Menu.IsOnlineMenu || res.Menu.CategoryCount != 2 || res.Menu.ItemCount != 2 {
		t.Fatalf("result %+v", res)
	}
	want := contracts.CatalogCounts{Menus: 1, NewMenus: 1, MenuCategories: 2, MenuItems: 2, OptionGroups: 1, Options: 2, ProductCategories: 1, Products: 1, Combos: 1, ComboComponents: 2}
	if res.Created != want {
		t.Fatalf("created %+v, want %+v", res.Created, want)
	}
	for kind, refs := range map[string][]string{"menu": {"menu"}, "menuCategories": {"soups", "drinks"}, "menuItems": {"salmon", "beer"},
		"optionGroups": {"bread"}, "options": {"rye", "white"}, "productCategories": {"fish"}, "products": {"salmon-fillet"}, "combos": {"lunch"}, "existingMenuCategories": nil} {
		got, ok := res.IDs[kind]
		if !ok || len(got) != len(refs) {
			t.Fatalf("ids[%s] = %v, want refs %v", kind, got, refs)
		}
		for _, r := range refs {
			if len(got[r]) != 36 {
				t.Fatalf("ids[%s][%s] = %q", kind, r, got[r])
			}
		}
	}
	if res.IDs["menu"]["menu"] != res.Menu.MenuID {
		t.Fatal("ids.menu is not the menu")
	}
	for table, n := range map[string]int{"menus": 1, "categories": 2, "items": 2, "menu_items": 2, "menu_categories": 2, "option_groups": 1,
		"options": 2, "item_option_groups": 1, "product_categories": 1, "products": 1, "combos": 1, "combo_components": 2, "menu_selection": 0} {
		if got := e.count(table); got != n {
			t.Errorf("%s: %d rows, want %d", table, got, n)
		}
	}

	tg := e.target(helsinki, res.Menu.MenuID)
	if !tg.InactiveDraft || tg.Revision != res.Revision || tg.Menu != res.Menu || len(tg.Categories) != 2 ||
		tg.Categories[0].Name != "Soups" || tg.Categories[0].ItemCount != 1 || tg.Categories[0].CategoryID != res.IDs["menuCategories"]["soups"] {
		t.Fatalf("target %+v, result %+v", tg, res)
	}

	// The same batch again: the stored answer, nothing written.
	again := e.batch(http.StatusCreated, helsinki, newDraftBatch("5d1e7c3a-0000-4000-8000-000000000001", "Imported spring"))
	if !again.Replayed || again.Menu != res.Menu || again.IDs["menuItems"]["salmon"] != res.IDs["menuItems"]["salmon"] {
		t.Fatalf("replay %+v", again)
	}
	if e.count("menus") != 1 || e.count("items") != 2 {
		t.Fatal("a replay wrote")
	}
	// The same id with another body: conflict, nothing written.
	status, raw := e.do(http.MethodPost, batchPath(helsinki), helsinki, newDraftBatch("5d1e7c3a-0000-4000-8000-000000000001", "Other name"))
	if status != http.StatusConflict || !strings.Contains(string(raw), "different request body") {
		t.Fatalf("reused batch id: %d %s", status, raw)
	}
	if e.count("menus") != 1 {
		t.Fatal("a reused batch id wrote")
	}
}

func TestCatalogBatchExistingDraft(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.Scopes = catalogScopes
	first := e.batch(http.StatusCreated, helsinki, newDraftBatch("5d1e7c3a-0000-4000-8000-000000000002", "Draft"))
	menuID := first.Menu.MenuID
	soups := first.IDs["menuCategories"]["soups"]

	doc := contracts.CatalogDocument{
		Menu:                   contracts.CatalogMenu{Ref: "m"},
		ExistingMenuCategories: []contracts.CatalogExistingCategory{{Ref: "soups", CategoryID: soups}},
		MenuCategories:         []contracts.CatalogMenuCategory{{Ref: "desserts", Name: "Desserts", Visible: true}},
		MenuItems: []contracts.CatalogMenuItem{
			{Ref: "pea", CategoryRef: "soups", Name: "Pea Soup", BasePriceMinor: 1200, Visible: true, ProductType: "food"},
			{Ref: "cake", CategoryRef: "desserts", Name: "Lingonberry Cake", BasePriceMinor: 800, Visible: true, ProductType: "food"},
		},
	}
	existing := func(id, revision string) contracts.CatalogBatch {
		return contracts.CatalogBatch{BatchID: id, Document: doc,
			Target: contracts.CatalogBatchTarget{Mode: contracts.CatalogTargetExistingDraft, MenuID: &menuID, ExpectedRevision: &revision}}
	}

	// A stale revision: conflict, nothing written.
	if msg := e.errorOf(http.StatusConflict, http.MethodPost, batchPath(helsinki), helsinki, existing("5d1e7c3a-0000-4000-8000-000000000003", first.Revision+"0")); !strings.Contains(msg, "changed since the plan") {
		t.Fatal(msg)
	}
	res := e.batch(http.StatusOK, helsinki, existing("5d1e7c3a-0000-4000-8000-000000000004", first.Revision))
	if res.Menu.MenuID != menuID || res.Menu.CategoryCount != 3 || res.Menu.ItemCount != 4 || res.Revision == first.Revision ||
		res.IDs["existingMenuCategories"]["soups"] != soups || res.Created.NewMenus != 0 || res.Created.MenuItems != 2 {
		t.Fatalf("existing draft result %+v", res)
	}
	tg := e.target(helsinki, menuID)
	if tg.Revision != res.Revision || tg.Categories[0].ItemCount != 2 {
		t.Fatalf("target after %+v", tg)
	}
	// The plan's revision is now stale.
	if msg := e.errorOf(http.StatusConflict, http.MethodPost, batchPath(helsinki), helsinki, existing("5d1e7c3a-0000-4000-8000-000000000005", first.Revision)); !strings.Contains(msg, "changed since the plan") {
		t.Fatal(msg)
	}

	// A category that is not on the target: 400, nothing written.
	bad := existing("5d1e7c3a-0000-4000-8000-000000000006", res.Revision)
	bad.Document.ExistingMenuCategories = []contracts.CatalogExistingCategory{{Ref: "soups", CategoryID: "5d1e7c3a-0000-4000-8000-0000000000ff"}}
	e.errorOf(http.StatusBadRequest, http.MethodPost, batchPath(helsinki), helsinki, bad)
	if e.count("items") != 4 {
		t.Fatal("a refused batch wrote")
	}

	// Published: no longer an inactive draft.
	e.Scopes = allScopes
	e.write(http.StatusOK, http.MethodPut, "/v1/restaurants/"+helsinki+"/menus/pos", map[string]any{
		"menuId": menuID, "expectedCategoryCount": 3, "expectedItemCount": 4, "expectedCurrentPosMenuId": nil,
		"idempotencyKey": "5d1e7c3a-0000-4000-8000-0000000000a1", "confirmed": true})
	tg = e.target(helsinki, menuID)
	if tg.InactiveDraft || !tg.Menu.IsPosMenu || tg.Revision == res.Revision {
		t.Fatalf("published target %+v", tg)
	}
	if msg := e.errorOf(http.StatusConflict, http.MethodPost, batchPath(helsinki), helsinki, existing("5d1e7c3a-0000-4000-8000-000000000007", tg.Revision)); !strings.Contains(msg, "no longer an inactive draft") {
		t.Fatal(msg)
	}
}

func TestCatalogBatchRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.Scopes = catalogScopes
	ok := newDraftBatch("5d1e7c3a-0000-4000-8000-000000000010", "Draft")
	menu := e.batch(http.StatusCreated, helsinki, ok).Menu.MenuID
	unresolved := newDraftBatch("5d1e7c3a-0000-4000-8000-000000000011", "Draft")
	unresolved.Document.MenuItems[0].CategoryRef = "nowhere"
	dupRef := newDraftBatch("5d1e7c3a-0000-4000-8000-000000000012", "Draft")
	dupRef.Document.MenuCategories[1].Ref = "soups"
	badCombo := newDraftBatch("5d1e7c3a-0000-4000-8000-000000000013", "Draft")
	badCombo.Document.Combos[0].Components[0].MenuItemRef = "ghost"
	badGroup := newDraftBatch("5d1e7c3a-0000-4000-8000-000000000014", "Draft")
	badGroup.Document.MenuItems[0].OptionGroupAssignments[0].OptionGroupRef = "ghost"
	noName := newDraftBatch("5d1e7c3a-0000-4000-8000-000000000015", "")
	badID := newDraftBatch("not-a-uuid", "Draft")
	for name, b := range map[string]any{
		"unresolved category": unresolved, "repeated ref": dupRef, "combo of an unknown item": badCombo,
		"unknown option group": badGroup, "no menu name": noName, "batch id": badID,
		"unknown field": `{"batchId":"5d1e7c3a-0000-4000-8000-000000000016","target":{"mode":"new_draft"},"document":{},"extra":1}`,
		"unknown mode":  `{"batchId":"5d1e7c3a-0000-4000-8000-000000000017","target":{"mode":"publish"},"document":{"menu":{"ref":"m","name":"x"}}}`,
		"existing without revision": contracts.CatalogBatch{BatchID: "5d1e7c3a-0000-4000-8000-000000000018",
			Target: contracts.CatalogBatchTarget{Mode: contracts.CatalogTargetExistingDraft, MenuID: &menu}, Document: contracts.CatalogDocument{Menu: contracts.CatalogMenu{Ref: "m"}}},
	} {
		t.Run(name, func(t *testing.T) {
			e.use(t)
			e.errorOf(http.StatusBadRequest, http.MethodPost, batchPath(helsinki), helsinki, b)
		})
	}
	e.use(t)
	if e.count("menus") != 1 {
		t.Fatal("a refused batch wrote")
	}

	// Outside the grant: another restaurant's menu, another tenant, no
	// catalog scope: 404; no signed context: 401.
	rev := "1"
	foreign := contracts.CatalogBatch{BatchID: "5d1e7c3a-0000-4000-8000-000000000019", Document: contracts.CatalogDocument{Menu: contracts.CatalogMenu{Ref: "m"}},
		Target: contracts.CatalogBatchTarget{Mode: contracts.CatalogTargetExistingDraft, MenuID: &menu, ExpectedRevision: &rev}}
	e.errorOf(http.StatusNotFound, http.MethodPost, batchPath(other), other, foreign)
	e.errorOf(http.StatusNotFound, http.MethodGet, targetPath(other, menu), other, nil)
	e.errorOf(http.StatusNotFound, http.MethodPost, batchPath(other), helsinki, ok)
	e.errorOf(http.StatusNotFound, http.MethodGet, targetPath(helsinki, "5d1e7c3a-0000-4000-8000-0000000000ff"), helsinki, nil)
	e.Scopes = []string{contracts.ScopeRestaurantRead, contracts.ScopeMenuRead}
	e.errorOf(http.StatusNotFound, http.MethodGet, targetPath(helsinki, menu), helsinki, nil)
	e.errorOf(http.StatusNotFound, http.MethodPost, batchPath(helsinki), helsinki, ok)
	e.errorOf(http.StatusUnauthorized, http.MethodPost, batchPath(helsinki), "", ok)
}

// TestCatalogBatchBeyondOneStatement applies a document whose rows need more
// bind parameters than one statement takes: every row is stored, children
// after their parents.
func TestCatalogBatchBeyondOneStatement(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.Scopes = catalogScopes
	d := contracts.CatalogDocument{Menu: contracts.CatalogMenu{Ref: "menu", Name: "Large"},
		MenuCategories: []contracts.CatalogMenuCategory{{Ref: "cat", Name: "All", Visible: true}}}
	const n = 2500 // 2,500 items of 29 columns: more than 65,535 parameters
	for i := range n {
		d.MenuItems = append(d.MenuItems, contracts.CatalogMenuItem{Ref: fmt.Sprintf("item-%d", i), CategoryRef: "cat",
			Name: fmt.Sprintf("Item %d", i), BasePriceMinor: int64(i), Visible: true, ProductType: "food"})
	}
	d.Combos = []contracts.CatalogCombo{{Ref: "combo", Name: "Last two", PriceMinor: 100, Visible: true,
		Components: []contracts.CatalogComboComponent{{MenuItemRef: fmt.Sprintf("item-%d", n-2), Quantity: 1}, {MenuItemRef: fmt.Sprintf("item-%d", n-1), Quantity: 1}}}}
	items, components := e.count("items"), e.count("combo_components")
	res := e.batch(http.StatusCreated, helsinki, contracts.CatalogBatch{BatchID: "5d1e7c3a-0000-4000-8000-0000000000aa",
		Target: contracts.CatalogBatchTarget{Mode: contracts.CatalogTargetNewDraft}, Document: d})
	if res.Created.MenuItems != n || res.Menu.ItemCount != n {
		t.Fatalf("result %+v", res)
	}
	if got := e.count("items") - items; got != n {
		t.Fatalf("%d items stored, want %d", got, n)
	}
	if got := e.count("combo_components") - components; got != 2 {
		t.Fatalf("%d combo components stored, want 2", got)
	}
}
