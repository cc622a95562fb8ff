package api_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func menus(r string) string { return "/v1/restaurants/" + r + "/menus" }

func items(r, m string) string { return menus(r) + "/" + m + "/items" }

func key(n int) string { return fmt.Sprintf("6e000000-0000-4000-8000-%012d", n) }

func TestListMenus(t *testing.T) {
	t.Parallel()
	e := fixtureEnv(newEnv(t))
	data := e.listMenus(helsinki)
	if val(data.PosMenuID) != menuMain || val(data.OnlineMenuID) != menuMain || data.RestaurantID != helsinki {
		t.Fatalf("selection %+v", data)
	}
	got := []string{}
	for _, m := range data.Menus {
		got = append(got, fmt.Sprintf("%s %v %v %v %v", m.Name, m.IsPosMenu, m.IsOnlineMenu, m.CategoryCount, m.ItemCount))
	}
	want := []string{"Autumn draft false false 1 1", "Lunch false false 1 1", "Main true true 3 4"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("menus %v, want %v", got, want)
	}
	// Another restaurant sees only its own; a restaurant outside the
	// context is 404; a query parameter of no use is 400.
	if data := e.listMenus(other); len(data.Menus) != 1 || data.PosMenuID != nil {
		t.Fatalf("other %+v", data)
	}
	e.errorOf(http.StatusNotFound, http.MethodGet, menus(other), helsinki, nil)
	e.errorOf(http.StatusBadRequest, http.MethodGet, menus(helsinki)+"?limit=2", helsinki, nil)
	e.errorOf(http.StatusUnauthorized, http.MethodGet, menus(helsinki), "", nil)
}

func TestListItems(t *testing.T) {
	t.Parallel()
	e := fixtureEnv(newEnv(t))
	data := e.listItems(items(helsinki, menuMain))
	rows := data.Items
	if len(rows) != 4 || data.Truncated || data.NextAfter != nil || data.Currency != "EUR" || data.MenuID != menuMain {
		t.Fatalf("listing %+v", data)
	}
	first := rows[0]
	if first.CatalogItemID != itemSalmon || first.EffectivePriceMinor != 1790 || first.BasePriceMinor != 1680 ||
		first.PriceSource != "menu_override" || first.CategoryID != catSoups || first.CategoryName != "Soups" ||
		val(first.Description) != "Creamy, with dill" || first.Availability != "available" || first.ProductType != "food" || first.OpenPrice == nil || *first.OpenPrice {
		t.Fatalf("salmon %+v", first)
	}
	if second := rows[1]; second.PriceSource != "base_price" || second.EffectivePriceMinor != 1200 || second.Availability != "sold_out" {
		t.Fatalf("pea %+v", second)
	}
	// The same item is priced by each menu.
	if lunch := e.listItems(items(helsinki, menuLunch)).Items; len(lunch) == 0 || lunch[0].EffectivePriceMinor != 1680 {
		t.Fatalf("lunch %+v", lunch)
	}

	// Pages of 3 then 1, by item id.
	var ids []string
	page := e.listItems(items(helsinki, menuMain) + "?limit=3")
	if !page.Truncated || val(page.NextAfter) != itemCake {
		t.Fatalf("page 1 %+v", page)
	}
	for _, r := range page.Items {
		ids = append(ids, r.CatalogItemID)
	}
	page = e.listItems(items(helsinki, menuMain) + "?limit=3&after=" + itemCake)
	if page.Truncated || page.NextAfter != nil {
		t.Fatalf("page 2 %+v", page)
	}
	for _, r := range page.Items {
		ids = append(ids, r.CatalogItemID)
	}
	if strings.Join(ids, ",") != strings.Join([]string{itemSalmon, itemPea, itemCake, itemBeer}, ",") {
		t.Fatalf("ids %v", ids)
	}

	for availability, want := range map[string]string{"sold_out": itemPea, "hidden": itemBeer} {
		rows := e.listItems(items(helsinki, menuMain) + "?availability=" + availability).Items
		if len(rows) != 1 || rows[0].CatalogItemID != want {
			t.Fatalf("%s: %+v", availability, rows)
		}
	}

	for _, q := range []string{"?limit=0", "?limit=501", "?limit=x", "?availability=gone", "?after=nope", "?cursor=1"} {
		e.errorOf(http.StatusBadRequest, http.MethodGet, items(helsinki, menuMain)+q, helsinki, nil)
	}
	e.errorOf(http.StatusNotFound, http.MethodGet, items(helsinki, "not-a-uuid"), helsinki, nil)
	e.errorOf(http.StatusNotFound, http.MethodGet, items(helsinki, otherMenu), helsinki, nil)
	e.errorOf(http.StatusNotFound, http.MethodGet, items(helsinki, "b0000000-0000-4000-8000-0000000000ff"), helsinki, nil)
}

func TestCreateMenu(t *testing.T) {
	t.Parallel()
	e := fixtureEnv(newEnv(t))
	body := newMenu{Name: "Winter", IdempotencyKey: key(1)}
	data := e.write(http.StatusCreated, http.MethodPost, menus(helsinki), body)
	m := data.Menu
	if data.Replayed || m.Name != "Winter" || m.CategoryCount != 0 || m.ItemCount != 0 || m.IsPosMenu || m.IsOnlineMenu {
		t.Fatalf("create %+v", data)
	}
	again := e.write(http.StatusCreated, http.MethodPost, menus(helsinki), body)
	if !again.Replayed || again.Menu.MenuID != m.MenuID || again.ActionID != data.ActionID {
		t.Fatalf("replay %+v", again)
	}
	if msg := e.errorOf(http.StatusConflict, http.MethodPost, menus(helsinki), helsinki, newMenu{Name: "Other", IdempotencyKey: key(1)}); !strings.Contains(msg, "different request body") {
		t.Fatal(msg)
	}
	// The key is the caller's: another partner client may use the same one.
	e.ClientID = "client-2"
	if d := e.write(http.StatusCreated, http.MethodPost, menus(helsinki), newMenu{Name: "Other", IdempotencyKey: key(1)}); d.Replayed {
		t.Fatalf("other client %+v", d)
	}
	listed := e.listMenus(helsinki)
	if len(listed.Menus) != 5 || val(listed.PosMenuID) != menuMain || val(listed.OnlineMenuID) != menuMain {
		t.Fatalf("after create %+v", listed)
	}

	for name, b := range map[string]any{
		"no name":         map[string]any{"idempotencyKey": key(2)},
		"empty name":      map[string]any{"name": "", "idempotencyKey": key(2)},
		"long name":       map[string]any{"name": strings.Repeat("é", 201), "idempotencyKey": key(2)},
		"no key":          map[string]any{"name": "X"},
		"key not a uuid":  map[string]any{"name": "X", "idempotencyKey": "k"},
		"unknown field":   map[string]any{"name": "X", "idempotencyKey": key(2), "isPosMenu": true},
		"malformed":       `{"name":`,
		"not an object":   `[]`,
		"confirmed given": map[string]any{"name": "X", "idempotencyKey": key(2), "confirmed": true},
	} {
		t.Run(name, func(t *testing.T) {
			e.use(t)
			e.errorOf(http.StatusBadRequest, http.MethodPost, menus(helsinki), helsinki, b)
		})
	}
	e.use(t)
	big := `{"name":"X","idempotencyKey":"` + key(3) + `","pad":"` + strings.Repeat("x", 1<<20) + `"}`
	if msg := e.errorOf(http.StatusRequestEntityTooLarge, http.MethodPost, menus(helsinki), helsinki, big); !strings.HasPrefix(msg, "payload_too_large") {
		t.Fatal(msg)
	}
	if n := e.count("menus"); n != 6 {
		t.Fatalf("%d menus", n)
	}
}

// addItems is the body of an add-items write.
type addItems struct {
	CatalogItemIDs        []string `json:"catalogItemIds"`
	ExpectedCategoryCount int      `json:"expectedCategoryCount"`
	ExpectedItemCount     int      `json:"expectedItemCount"`
	IdempotencyKey        string   `json:"idempotencyKey"`
	Confirmed             bool     `json:"confirmed"`
}

func addBody(k int, cats, items int, ids ...string) addItems {
	if ids == nil {
		ids = []string{}
	}
	return addItems{CatalogItemIDs: ids, ExpectedCategoryCount: cats, ExpectedItemCount: items, IdempotencyKey: key(k), Confirmed: true}
}

func TestAddItems(t *testing.T) {
	t.Parallel()
	e := fixtureEnv(newEnv(t))
	// Coffee's category (drinks) joins the draft; salmon's (soups) too.
	body := addBody(10, 1, 1, itemCoffee, itemSalmon)
	data := e.write(http.StatusOK, http.MethodPost, items(helsinki, menuDraft), body)
	if m := data.Menu; m.CategoryCount != 3 || m.ItemCount != 3 || m.IsPosMenu || !slices.Equal(data.AddedCatalogItemIDs, []string{itemCoffee, itemSalmon}) {
		t.Fatalf("add %+v", data)
	}
	if again := e.write(http.StatusOK, http.MethodPost, items(helsinki, menuDraft), body); !again.Replayed || again.Menu.ItemCount != 3 {
		t.Fatalf("replay %+v", again)
	}
	// The same key for another menu is another request.
	e.errorOf(http.StatusConflict, http.MethodPost, items(helsinki, menuLunch), helsinki, body)

	cases := []struct {
		name   string
		menu   string
		body   any
		status int
		says   string
	}{
		{"unknown items listed", menuDraft, addBody(11, 3, 3, itemCake, otherItem, "a0000000-0000-4000-8000-0000000000ee"), http.StatusBadRequest, otherItem + ", a0000000-0000-4000-8000-0000000000ee"},
		{"already on the menu", menuDraft, addBody(12, 3, 3, itemCake, itemCoffee), http.StatusConflict, "already on the menu: " + itemCoffee},
		{"stale counts", menuDraft, addBody(13, 1, 1, itemCake), http.StatusConflict, "has 3 categories and 3 items, not 1 and 1"},
		{"published menu", menuMain, addBody(14, 3, 4, itemCoffee), http.StatusConflict, "no longer an inactive draft"},
		{"not confirmed", menuDraft, map[string]any{"catalogItemIds": []string{itemCake}, "expectedCategoryCount": 3, "expectedItemCount": 3, "idempotencyKey": key(15), "confirmed": false}, http.StatusBadRequest, "confirmed"},
		{"no ids", menuDraft, addBody(16, 3, 3), http.StatusBadRequest, "catalogItemIds must give 1 to 50"},
		{"51 ids", menuDraft, addBody(17, 3, 3, manyIDs(51)...), http.StatusBadRequest, "catalogItemIds must give 1 to 50"},
		{"repeated id", menuDraft, addBody(18, 3, 3, itemCake, itemCake), http.StatusBadRequest, "catalogItemIds[1] gives item " + itemCake + " again"},
		{"negative category count", menuDraft, addBody(22, -1, 3, itemCake), http.StatusBadRequest, "expectedCategoryCount cannot be negative"},
		{"negative item count", menuDraft, addBody(23, 3, -1, itemCake), http.StatusBadRequest, "expectedItemCount cannot be negative"},
		{"no counts", menuDraft, map[string]any{"catalogItemIds": []string{itemCake}, "idempotencyKey": key(19), "confirmed": true}, http.StatusBadRequest, "required"},
		{"unknown menu", "b0000000-0000-4000-8000-0000000000ff", addBody(20, 0, 0, itemCake), http.StatusNotFound, ""},
		{"other restaurant's menu", otherMenu, addBody(21, 1, 1, itemCake), http.StatusNotFound, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.use(t)
			if msg := e.errorOf(c.status, http.MethodPost, items(helsinki, c.menu), helsinki, c.body); !strings.Contains(msg, c.says) {
				t.Fatalf("message %q does not say %q", msg, c.says)
			}
		})
	}
	e.use(t)
	if d := e.listMenus(helsinki); val(d.PosMenuID) != menuMain || val(d.OnlineMenuID) != menuMain {
		t.Fatalf("adding published something: %+v", d)
	}
	// 50 is allowed (all unknown here: 400 naming them, not a bound error).
	if msg := e.errorOf(http.StatusBadRequest, http.MethodPost, items(helsinki, menuDraft), helsinki, addBody(22, 3, 3, manyIDs(50)...)); !strings.Contains(msg, "not in the restaurant's catalog") {
		t.Fatal(msg)
	}
}

func manyIDs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("a1000000-0000-4000-8000-%012d", i)
	}
	return out
}

func itemPath(r, m, i string) string { return items(r, m) + "/" + i }

func patchBody(k int, version string, changes map[string]any) map[string]any {
	return map[string]any{"expectedVersion": version, "changes": changes, "idempotencyKey": key(k), "confirmed": true}
}

func TestInspectAndEditDraftItem(t *testing.T) {
	t.Parallel()
	e := fixtureEnv(newEnv(t))
	target := e.inspect(menuDraft, itemSpecial)
	item := target.Item
	if !target.CanEdit || target.SharedMenuCount != 0 || item.Name != "Chef's Special" || item.BasePriceMinor != 1500 ||
		item.CategoryID != catDesserts || item.Description != nil || !item.Visible || !item.ShowInKitchen {
		t.Fatalf("target %+v", target)
	}
	v1 := target.Version
	if shared := e.inspect(menuLunch, itemSalmon); shared.CanEdit || shared.SharedMenuCount != 1 {
		t.Fatalf("shared %+v", shared)
	}
	if pub := e.inspect(menuMain, itemCake); pub.CanEdit || pub.SharedMenuCount != 0 {
		t.Fatalf("published %+v", pub)
	}
	revision := func() string {
		e.t.Helper()
		e.Scopes = catalogScopes
		defer func() { e.Scopes = allScopes }()
		return e.target(helsinki, menuDraft).Revision
	}
	before := revision()

	// An unknown field is named by its whole path, and nothing changes.
	if msg := e.errorOf(http.StatusBadRequest, http.MethodPatch, itemPath(helsinki, menuDraft, itemSpecial), helsinki,
		patchBody(29, v1, map[string]any{"colour": "red"})); !strings.Contains(msg, `Field "changes.colour" is not allowed here.`) {
		t.Fatalf("unknown field in changes: %s", msg)
	}

	body := patchBody(30, v1, map[string]any{"name": "Chef's Autumn Special", "basePriceMinor": 1650, "description": "Ask the staff", "showInKitchen": false})
	data := must[itemEdit](e, http.StatusOK, http.MethodPatch, itemPath(helsinki, menuDraft, itemSpecial), helsinki, body)
	edited := data.Item
	if data.PreviousVersion != v1 || data.Version == v1 || edited.Name != "Chef's Autumn Special" || edited.BasePriceMinor != 1650 ||
		val(edited.Description) != "Ask the staff" || edited.ShowInKitchen || !edited.Visible || data.MenuID != menuDraft {
		t.Fatalf("edit %+v", data)
	}
	v2 := data.Version
	if again := must[itemEdit](e, http.StatusOK, http.MethodPatch, itemPath(helsinki, menuDraft, itemSpecial), helsinki, body); !again.Replayed || again.Version != v2 {
		t.Fatalf("replay %+v", again)
	}
	if now := e.inspect(menuDraft, itemSpecial); now.Version != v2 {
		t.Fatalf("version after edit %+v", now)
	}
	if revision() == before {
		t.Fatal("an item edit did not move its menu's revision")
	}
	// description may be cleared with null.
	cleared := must[itemEdit](e, http.StatusOK, http.MethodPatch, itemPath(helsinki, menuDraft, itemSpecial), helsinki, patchBody(31, v2, map[string]any{"description": nil}))
	if cleared.Item.Description != nil || cleared.PreviousVersion != v2 {
		t.Fatalf("cleared %+v", cleared)
	}
	v3 := cleared.Version

	cases := []struct {
		name   string
		menu   string
		item   string
		body   any
		status int
		says   string
	}{
		{"stale version", menuDraft, itemSpecial, patchBody(32, v1, map[string]any{"visible": false}), http.StatusConflict, "changed since it was inspected"},
		{"shared item", menuLunch, itemSalmon, patchBody(33, "v1", map[string]any{"visible": false}), http.StatusConflict, "also on 1 other menu"},
		{"published menu", menuMain, itemCake, patchBody(34, "v1", map[string]any{"visible": false}), http.StatusConflict, "no longer an inactive draft"},
		{"empty changes", menuDraft, itemSpecial, patchBody(35, v3, map[string]any{}), http.StatusBadRequest, "changes is empty"},
		{"unreviewed field", menuDraft, itemSpecial, patchBody(36, v3, map[string]any{"availability": "hidden"}), http.StatusBadRequest, "availability"},
		{"null name", menuDraft, itemSpecial, patchBody(37, v3, map[string]any{"name": nil}), http.StatusBadRequest, "cannot be null"},
		{"price too high", menuDraft, itemSpecial, patchBody(38, v3, map[string]any{"basePriceMinor": 1_000_000_001}), http.StatusBadRequest, "basePriceMinor"},
		{"negative price", menuDraft, itemSpecial, patchBody(39, v3, map[string]any{"basePriceMinor": -1}), http.StatusBadRequest, "basePriceMinor"},
		{"long description", menuDraft, itemSpecial, patchBody(40, v3, map[string]any{"description": strings.Repeat("x", 2001)}), http.StatusBadRequest, "2000"},
		{"no version", menuDraft, itemSpecial, map[string]any{"changes": map[string]any{"visible": false}, "idempotencyKey": key(41), "confirmed": true}, http.StatusBadRequest, "expectedVersion"},
		{"not confirmed", menuDraft, itemSpecial, map[string]any{"expectedVersion": v3, "changes": map[string]any{"visible": false}, "idempotencyKey": key(42)}, http.StatusBadRequest, "confirmed"},
		{"item not on the menu", menuDraft, itemCake, patchBody(43, "v1", map[string]any{"visible": false}), http.StatusNotFound, ""},
		{"other restaurant's item", menuDraft, otherItem, patchBody(44, "v1", map[string]any{"visible": false}), http.StatusNotFound, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.use(t)
			if msg := e.errorOf(c.status, http.MethodPatch, itemPath(helsinki, c.menu, c.item), helsinki, c.body); !strings.Contains(msg, c.says) {
				t.Fatalf("message %q does not say %q", msg, c.says)
			}
		})
	}
	e.use(t)
	e.errorOf(http.StatusNotFound, http.MethodGet, itemPath(helsinki, menuDraft, itemCake), helsinki, nil)
	e.errorOf(http.StatusNotFound, http.MethodGet, itemPath(helsinki, menuDraft, "x"), helsinki, nil)
	if d := e.listMenus(helsinki); val(d.PosMenuID) != menuMain || val(d.OnlineMenuID) != menuMain {
		t.Fatalf("editing published something: %+v", d)
	}
}

func setBody(k int, menu string, cats, items int, currentField string, current any) map[string]any {
	return map[string]any{"menuId": menu, "expectedCategoryCount": cats, "expectedItemCount": items, currentField: current, "idempotencyKey": key(k), "confirmed": true}
}

func TestSetPosAndOnlineMenus(t *testing.T) {
	t.Parallel()
	e := fixtureEnv(newEnv(t))
	pos, online := menus(helsinki)+"/pos", menus(helsinki)+"/online"
	data := e.write(http.StatusOK, http.MethodPut, pos, setBody(50, menuDraft, 1, 1, "expectedCurrentPosMenuId", menuMain))
	if val(data.PreviousPosMenuID) != menuMain || !data.Menu.IsPosMenu || data.Menu.MenuID != menuDraft {
		t.Fatalf("set pos %+v", data)
	}
	if again := e.write(http.StatusOK, http.MethodPut, pos, setBody(50, menuDraft, 1, 1, "expectedCurrentPosMenuId", menuMain)); !again.Replayed || val(again.PreviousPosMenuID) != menuMain {
		t.Fatalf("replay %+v", again)
	}
	// Setting the current menu again succeeds and returns itself.
	if same := e.write(http.StatusOK, http.MethodPut, pos, setBody(51, menuDraft, 1, 1, "expectedCurrentPosMenuId", menuDraft)); val(same.PreviousPosMenuID) != menuDraft {
		t.Fatalf("same %+v", same)
	}
	if listed := e.listMenus(helsinki); val(listed.PosMenuID) != menuDraft || val(listed.OnlineMenuID) != menuMain {
		t.Fatalf("after set pos %+v", listed)
	}
	data = e.write(http.StatusOK, http.MethodPut, online, setBody(52, menuLunch, 1, 1, "expectedCurrentOnlineMenuId", menuMain))
	if val(data.PreviousOnlineMenuID) != menuMain || !data.Menu.IsOnlineMenu {
		t.Fatalf("set online %+v", data)
	}
	empty := e.write(http.StatusCreated, http.MethodPost, menus(helsinki), newMenu{Name: "Empty", IdempotencyKey: key(53)}).Menu.MenuID
	// An empty menu may be the POS menu, never the online menu.
	cases := []struct {
		name   string
		path   string
		body   any
		status int
		says   string
	}{
		{"stale current pos", pos, setBody(54, menuMain, 3, 4, "expectedCurrentPosMenuId", menuMain), http.StatusConflict, "current POS menu changed since review: it is now " + menuDraft},
		{"stale current online", online, setBody(55, menuMain, 3, 4, "expectedCurrentOnlineMenuId", nil), http.StatusConflict, "current online menu changed"},
		{"stale counts", pos, setBody(56, menuMain, 3, 3, "expectedCurrentPosMenuId", menuDraft), http.StatusConflict, "has 3 categories and 4 items, not 3 and 3"},
		{"empty online menu", online, setBody(57, empty, 0, 0, "expectedCurrentOnlineMenuId", menuLunch), http.StatusConflict, "empty menu"},
		{"unknown menu", pos, setBody(58, "b0000000-0000-4000-8000-0000000000ff", 0, 0, "expectedCurrentPosMenuId", menuDraft), http.StatusNotFound, ""},
		{"other restaurant's menu", pos, setBody(59, otherMenu, 1, 1, "expectedCurrentPosMenuId", menuDraft), http.StatusNotFound, ""},
		{"the other operation's field", pos, setBody(60, menuMain, 3, 4, "expectedCurrentOnlineMenuId", menuDraft), http.StatusBadRequest, "expectedCurrentOnlineMenuId"},
		{"no current", pos, map[string]any{"menuId": menuMain, "expectedCategoryCount": 3, "expectedItemCount": 4, "idempotencyKey": key(61), "confirmed": true}, http.StatusBadRequest, "expectedCurrentPosMenuId"},
		{"menu id not a uuid", pos, setBody(62, "m", 3, 4, "expectedCurrentPosMenuId", nil), http.StatusBadRequest, "uuid"},
		{"not confirmed", pos, map[string]any{"menuId": menuMain, "expectedCategoryCount": 3, "expectedItemCount": 4, "expectedCurrentPosMenuId": nil, "idempotencyKey": key(63), "confirmed": false}, http.StatusBadRequest, "confirmed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.use(t)
			if msg := e.errorOf(c.status, http.MethodPut, c.path, helsinki, c.body); !strings.Contains(msg, c.says) {
				t.Fatalf("message %q does not say %q", msg, c.says)
			}
		})
	}
	e.use(t)
	if d := e.write(http.StatusOK, http.MethodPut, pos, setBody(64, empty, 0, 0, "expectedCurrentPosMenuId", menuDraft)); val(d.PreviousPosMenuID) != menuDraft {
		t.Fatalf("empty pos %+v", d)
	}
	// Naming set A has no /menus/active (nor has its document).
	e.Unchecked = true
	e.errorOf(http.StatusNotFound, http.MethodPut, menus(helsinki)+"/active", helsinki, setBody(65, menuMain, 3, 4, "expectedCurrentPosMenuId", empty))
	e.Unchecked = false
	// A restaurant with no selection yet: null is the current menu.
	if d := must[menuWrite](e, http.StatusOK, http.MethodPut, menus(other)+"/online", other, setBody(66, otherMenu, 1, 1, "expectedCurrentOnlineMenuId", nil)); d.PreviousOnlineMenuID != nil {
		t.Fatalf("first online %+v", d)
	}
}

// TestKeyInUpperCaseIsTheSameKey: a UUID key spelled in upper case is the
// same key: the repeat replays the menu instead of creating a second one.
func TestKeyInUpperCaseIsTheSameKey(t *testing.T) {
	t.Parallel()
	e := fixtureEnv(newEnv(t))
	before := e.count("menus")
	upper := "6E000000-0000-4000-8000-0000000000AB"
	first := e.write(http.StatusCreated, http.MethodPost, menus(helsinki), newMenu{Name: "Winter", IdempotencyKey: upper})
	again := e.write(http.StatusCreated, http.MethodPost, menus(helsinki), newMenu{Name: "Winter", IdempotencyKey: strings.ToLower(upper)})
	if !again.Replayed || again.ActionID != first.ActionID || e.count("menus") != before+1 {
		t.Fatalf("lower-case repeat of an upper-case key: %+v (menus %d → %d)", again, before, e.count("menus"))
	}
}

// TestTextThatIsNotUTF8WithoutNULIsRefused: a NUL or invalid UTF-8 in a
// menu name, an item name or description is a 400 naming the field (a NUL
// reached Postgres and answered 500; invalid UTF-8 was stored as U+FFFD).
func TestTextThatIsNotUTF8WithoutNULIsRefused(t *testing.T) {
	t.Parallel()
	e := fixtureEnv(newEnv(t))
	before := e.count("menus")
	for _, bad := range []string{`\u0000`, "\xff", `\ud800`} {
		body := `{"name":"Winter` + bad + `","idempotencyKey":"` + key(40) + `"}`
		if msg := e.errorOf(http.StatusBadRequest, http.MethodPost, menus(helsinki), helsinki, body); !strings.Contains(msg, "name is not valid text") {
			t.Errorf("%q: %s", bad, msg)
		}
	}
	if n := e.count("menus"); n != before {
		t.Fatalf("%d menus written", n-before)
	}
}

// TestErrorsNameTheFieldAsWritten: a wrong type names the JSON path of the
// body and what it must be, never a Go name (writeCommon, setMenuFields).
func TestErrorsNameTheFieldAsWritten(t *testing.T) {
	t.Parallel()
	e := fixtureEnv(newEnv(t))
	version := e.inspect(menuDraft, itemSpecial).Version
	for _, tc := range []struct{ method, path, body, want string }{
		{http.MethodPost, menus(helsinki), `{"name":"X","idempotencyKey":"` + key(60) + `","confirmed":"yes"}`, "confirmed must be true or false."},
		{http.MethodPost, menus(helsinki), `{"name":7,"idempotencyKey":"` + key(60) + `"}`, "name must be a string."},
		{http.MethodPut, menus(helsinki) + "/pos", `{"menuId":"` + menuDraft + `","expectedCategoryCount":"1","expectedItemCount":1,"expectedCurrentPosMenuId":"` + menuMain + `","idempotencyKey":"` + key(61) + `","confirmed":true}`, "expectedCategoryCount must be an integer."},
		{http.MethodPatch, itemPath(helsinki, menuDraft, itemSpecial), `{"expectedVersion":"` + version + `","changes":{"basePriceMinor":"12"},"idempotencyKey":"` + key(62) + `","confirmed":true}`, "changes.basePriceMinor must be an integer."},
	} {
		msg := e.errorOf(http.StatusBadRequest, tc.method, tc.path, helsinki, tc.body)
		if msg != "invalid_request: "+tc.want {
			t.Errorf("%s: %q, want %q", tc.body, msg, tc.want)
		}
	}
}
