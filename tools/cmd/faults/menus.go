package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// menuChain creates a menu, adds two shared catalog items to it in one
// change (the menu then holds none), and makes it the POS menu (odd
// scenarios) or the online menu (even ones) with the counts and current
// menu read off the menu list just before. Publishing may meet a 409 when
// another writer changed the current menu first.
func (l *load) menuChain(n int) *chain {
	name := fmt.Sprintf("Faults %s #%d", l.runID, n)
	c := &chain{kind: "menu " + name, check: l.checkMenuChain}
	menuID := func() string { return field("menu", "menuId")(c.writes[0].answer) }
	c.steps = []func(context.Context) *keyedWrite{
		func(context.Context) *keyedWrite {
			return newKeyed("createMenu", http.MethodPost, l.path("/menus"), map[string]any{"name": name}, field("menu", "menuId"))
		},
		func(context.Context) *keyedWrite {
			return newKeyed("addMenuItems", http.MethodPost, l.path("/menus/"+menuID()+"/items"),
				map[string]any{"catalogItemIds": l.items, "expectedCategoryCount": 0, "expectedItemCount": 0, "confirmed": true},
				func([]byte) string { return "added" })
		},
		func(ctx context.Context) *keyedWrite { return l.publishWrite(ctx, n%2 == 0, menuID()) },
	}
	return c
}

type listedMenu struct {
	MenuID        string `json:"menuId"`
	Name          string `json:"name"`
	IsPosMenu     bool   `json:"isPosMenu"`
	IsOnlineMenu  bool   `json:"isOnlineMenu"`
	CategoryCount int    `json:"categoryCount"`
	ItemCount     int    `json:"itemCount"`
}

func (l *load) menuList(ctx context.Context) ([]listedMenu, bool) {
	var listed struct {
		Data struct {
			Menus []listedMenu `json:"menus"`
		} `json:"data"`
	}
	ok := l.get(ctx, "menu list", l.path("/menus"), &listed)
	return listed.Data.Menus, ok
}

// publishWrite makes the menu the POS or the online menu, naming the
// counts and the current menu it read; its effect is the menu it replaced.
func (l *load) publishWrite(ctx context.Context, online bool, menuID string) *keyedWrite {
	menus, ok := l.menuList(ctx)
	if !ok {
		return nil
	}
	body := map[string]any{"menuId": menuID, "confirmed": true}
	op, path, currentField := "setPosMenu", l.path("/menus/pos"), "expectedCurrentPosMenuId"
	if online {
		op, path, currentField = "setOnlineMenu", l.path("/menus/online"), "expectedCurrentOnlineMenuId"
	}
	var current any
	found := false
	for _, m := range menus {
		if (online && m.IsOnlineMenu) || (!online && m.IsPosMenu) {
			current = m.MenuID
		}
		if m.MenuID == menuID {
			found = true
			body["expectedCategoryCount"], body["expectedItemCount"] = m.CategoryCount, m.ItemCount
		}
	}
	if !found {
		return nil
	}
	body[currentField] = current
	w := newKeyed(op, http.MethodPut, path, body, func(raw []byte) string {
		var r struct {
			Data struct {
				PreviousPosMenuID    *string `json:"previousPosMenuId"`
				PreviousOnlineMenuID *string `json:"previousOnlineMenuId"`
			} `json:"data"`
		}
		_ = json.Unmarshal(raw, &r)
		for _, p := range []*string{r.Data.PreviousPosMenuID, r.Data.PreviousOnlineMenuID} {
			if p != nil {
				return *p
			}
		}
		return "null"
	})
	w.conflictOK = true
	return w
}

// checkMenuChain: one menu per create key through the API and in the
// database; both items on it (a half-applied add would leave one, and its
// replay, which expects an empty menu, would be refused); an acknowledged
// publish key stored once.
func (l *load) checkMenuChain(ctx context.Context, k *checker, c *chain) []string {
	if c.writes[0].answer == nil {
		return nil // the replay reported it
	}
	var problems []string
	name := strings.TrimPrefix(c.kind, "menu ")
	menuID := c.writes[0].result
	api, apiItems := 0, -1
	for _, m := range k.menus {
		if m.Name == name {
			api++
		}
		if m.MenuID == menuID {
			apiItems = m.ItemCount
		}
	}
	db := k.count(ctx, `SELECT count(*) FROM menus.menus WHERE name = $1`, name)
	items := k.count(ctx, `SELECT count(*) FROM menus.menu_items WHERE menu_id::text = $1`, menuID)
	if api != 1 || db != 1 {
		problems = append(problems, fmt.Sprintf("%s (acknowledged %v): %d menus through the API, %d in the database", c.kind, c.writes[0].acked, api, db))
	}
	if items != len(l.items) || apiItems != len(l.items) {
		problems = append(problems, fmt.Sprintf("%s: %d items in the database, %d through the API, want %d", c.kind, items, apiItems, len(l.items)))
	}
	if len(c.writes) == 3 && c.writes[2].answer != nil {
		if n := k.count(ctx, `SELECT count(*) FROM menus.idempotency_keys WHERE key = $1 AND status = 200`, c.writes[2].key); n != 1 {
			problems = append(problems, fmt.Sprintf("%s: publish key %s has %d stored successful outcomes, want 1", c.kind, c.writes[2].key, n))
		}
	}
	return problems
}

// checkPublishing: no two successful publish writes replaced the same menu
// (each suite menu is published by one key, so a menu replaced twice means
// a write took effect twice).
func (l *load) checkPublishing() []string {
	var problems []string
	replaced := map[string]string{}
	for _, c := range l.chains {
		if !strings.HasPrefix(c.kind, "menu ") || len(c.writes) < 3 || c.writes[2].answer == nil {
			continue
		}
		w := c.writes[2]
		r := w.path + " " + w.result
		if other, ok := replaced[r]; ok {
			problems = append(problems, fmt.Sprintf("publishing %q and %q both replaced %s", other, c.kind, r))
		}
		replaced[r] = c.kind
	}
	return problems
}

// importChain plans a catalog import of a small document into a new
// draft, applies it, and edits one of its items (items created for that
// draft only, so editable).
func (l *load) importChain(n int) *chain {
	name := fmt.Sprintf("Faults import %s #%d", l.runID, n)
	doc := map[string]any{
		"menu":                   map[string]any{"ref": "m", "name": name},
		"existingMenuCategories": []any{},
		"menuCategories":         []any{map[string]any{"ref": "c", "name": "Faults", "visible": true, "regulatedProductClass": "standard", "discountPolicy": "allowed"}},
		"menuItems": []any{
			map[string]any{"ref": "a", "categoryRef": "c", "name": "Faults item a", "basePriceMinor": 480, "visible": true, "productType": "food"},
			map[string]any{"ref": "b", "categoryRef": "c", "name": "Faults item b", "basePriceMinor": 300, "visible": true, "productType": "food"},
		},
	}
	target := map[string]any{"mode": "new_draft"}
	c := &chain{kind: "import " + name, check: l.checkImportChain}
	c.steps = []func(context.Context) *keyedWrite{
		func(context.Context) *keyedWrite {
			return &keyedWrite{op: "planCatalogImport", method: http.MethodPost, path: l.path("/catalog-import/plan"),
				body: map[string]any{"target": target, "document": doc}, effect: field("planHash")}
		},
		func(context.Context) *keyedWrite {
			return newKeyed("applyCatalogImport", http.MethodPost, l.path("/catalog-import/apply"),
				map[string]any{"target": target, "document": doc, "expectedPlanHash": c.writes[0].result, "confirmed": true},
				func(raw []byte) string { return field("menu", "menuId")(raw) + " " + field("actionId")(raw) })
		},
		func(ctx context.Context) *keyedWrite {
			menuID, itemID := importedIDs(c)
			var item struct {
				Data struct {
					Version string `json:"version"`
					CanEdit bool   `json:"canEdit"`
				} `json:"data"`
			}
			if !l.get(ctx, "get draft menu item", l.path("/menus/"+menuID+"/items/"+itemID), &item) || !item.Data.CanEdit {
				return nil
			}
			return newKeyed("updateDraftMenuItem", http.MethodPatch, l.path("/menus/"+menuID+"/items/"+itemID),
				map[string]any{"expectedVersion": item.Data.Version, "changes": map[string]any{"name": name + " edited", "basePriceMinor": 777}, "confirmed": true},
				field("version"))
		},
	}
	return c
}

// importedIDs are the applied import's menu and its item "a".
func importedIDs(c *chain) (menuID, itemID string) {
	raw := c.writes[1].answer
	return field("menu", "menuId")(raw), field("ids", "menuItems", "a")(raw)
}

// checkImportChain: the plan answered one hash; the import's menu exists
// once with both items (all or none, never part); one applied import per
// key; the edit moved the item's version exactly once and the item holds
// the edited values, through the API and in the database.
func (l *load) checkImportChain(ctx context.Context, k *checker, c *chain) []string {
	if len(c.writes) != len(c.steps) || c.writes[2].answer == nil {
		return nil // the replay reported it
	}
	var problems []string
	name := strings.TrimPrefix(c.kind, "import ")
	apply := c.writes[1]
	menuID, itemID := importedIDs(c)
	if n := k.count(ctx, `SELECT count(*) FROM menus.menus WHERE name = $1`, name); n != 1 {
		problems = append(problems, fmt.Sprintf("%s: %d menus in the database, want 1", c.kind, n))
	}
	if n := k.count(ctx, `SELECT count(*) FROM menus.menu_items WHERE menu_id::text = $1`, menuID); n != 2 {
		problems = append(problems, fmt.Sprintf("%s: %d of its 2 items on the menu in the database", c.kind, n))
	}
	if n := k.count(ctx, `SELECT count(*) FROM catalogimport.applied_imports WHERE idempotency_key::text = $1`, apply.key); n != 1 {
		problems = append(problems, fmt.Sprintf("%s: %d applied imports for key %s, want 1", c.kind, n, apply.key))
	}
	api := 0
	for _, m := range k.menus {
		if m.Name == name {
			api++
			if m.ItemCount != 2 {
				problems = append(problems, fmt.Sprintf("%s: %d items through the API, want 2", c.kind, m.ItemCount))
			}
		}
	}
	if api != 1 {
		problems = append(problems, fmt.Sprintf("%s: %d menus through the API, want 1", c.kind, api))
	}
	edit := c.writes[2]
	if edit.result != "v2" {
		problems = append(problems, fmt.Sprintf("%s: the edit answered version %s, want v2", c.kind, edit.result))
	}
	var version int
	var itemName string
	var price int64
	if err := k.conn.QueryRow(ctx, `SELECT version, name, base_price_minor FROM menus.items WHERE id::text = $1`, itemID).Scan(&version, &itemName, &price); err != nil ||
		version != 2 || itemName != name+" edited" || price != 777 {
		problems = append(problems, fmt.Sprintf("%s: item in the database: version %d, %q, %d (%v); want version 2 after one edit", c.kind, version, itemName, price, err))
	}
	var item struct {
		Data struct {
			Version string `json:"version"`
			Item    struct {
				Name string `json:"name"`
			} `json:"item"`
		} `json:"data"`
	}
	if !l.get(ctx, "get draft menu item", l.path("/menus/"+menuID+"/items/"+itemID), &item) || item.Data.Version != "v2" || item.Data.Item.Name != name+" edited" {
		problems = append(problems, fmt.Sprintf("%s: item through the API: version %s, %q", c.kind, item.Data.Version, item.Data.Item.Name))
	}
	return problems
}
