package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/servicetest"
	"partnerapi.dev/services/menus/internal/api"
	"partnerapi.dev/services/menus/internal/store"
)

// Set-B answers, as TestNamingSetB reads them.
type (
	menuB struct {
		MenuPublicID   string `json:"menuPublicId"`
		ActiveForPos   bool   `json:"activeForPos"`
		OnlineOrdering bool   `json:"onlineOrdering"`
		// MenuID is set A's name, absent under set B.
		MenuID *string `json:"menuId"`
	}
	menuListB struct {
		Menus              []menuB `json:"menus"`
		ActiveMenuPublicID *string `json:"activeMenuPublicId"`
		OnlineMenuPublicID *string `json:"onlineMenuPublicId"`
	}
	itemListingB struct {
		Items []struct {
			MenuItemPublicID    string `json:"menuItemPublicId"`
			CategoryPublicID    string `json:"categoryPublicId"`
			PriceMinor          int64  `json:"priceMinor"`
			EffectivePriceMinor int64  `json:"effectivePriceMinor"`
		} `json:"items"`
	}
	draftItemB struct {
		MenuItemPublicID string `json:"menuItemPublicId"`
		PriceMinor       int64  `json:"priceMinor"`
	}
	itemTargetB struct {
		Item    draftItemB `json:"item"`
		CanEdit bool       `json:"canEdit"`
		Version string     `json:"version"`
	}
	itemEditB struct {
		MenuPublicID string     `json:"menuPublicId"`
		Item         draftItemB `json:"item"`
	}
	// menuWriteB is the data of a set-B menu write's answer (create, add
	// items, set active or online).
	menuWriteB struct {
		Replayed                   bool     `json:"replayed"`
		Menu                       menuB    `json:"menu"`
		AddedMenuItemPublicIDs     []string `json:"addedMenuItemPublicIds"`
		PreviousActiveMenuPublicID *string  `json:"previousActiveMenuPublicId"`
		PreviousOnlineMenuPublicID *string  `json:"previousOnlineMenuPublicId"`
	}
)

// Under naming set B every operation works with set-B names (answers are
// checked against the set-B document by env.do), set-A names in a body are
// unknown fields, and the POS menu lives at /menus/active only.
func TestNamingSetB(t *testing.T) {
	t.Parallel()
	e := fixtureEnv(newEnvNaming(t, api.NamingB))
	data := must[menuListB](e, http.StatusOK, http.MethodGet, menus(helsinki), helsinki, nil)
	if val(data.ActiveMenuPublicID) != menuMain || val(data.OnlineMenuPublicID) != menuMain || len(data.Menus) == 0 {
		t.Fatalf("list %+v", data)
	}
	first := data.Menus[0]
	if first.MenuPublicID != menuDraft || first.ActiveForPos || first.OnlineOrdering || first.MenuID != nil {
		t.Fatalf("menu %+v", first)
	}
	rows := must[itemListingB](e, http.StatusOK, http.MethodGet, items(helsinki, menuMain)+"?limit=1", helsinki, nil).Items
	if len(rows) == 0 {
		t.Fatal("no items")
	}
	if row := rows[0]; row.MenuItemPublicID != itemSalmon || row.CategoryPublicID != catSoups || row.PriceMinor != 1680 || row.EffectivePriceMinor != 1790 {
		t.Fatalf("item %+v", row)
	}

	created := must[menuWriteB](e, http.StatusCreated, http.MethodPost, menus(helsinki), helsinki, newMenu{Name: "B draft", IdempotencyKey: key(70)})
	menu := created.Menu.MenuPublicID
	added := must[menuWriteB](e, http.StatusOK, http.MethodPost, items(helsinki, menu), helsinki, map[string]any{
		"menuItemPublicIds": []string{itemCoffee}, "expectedCategoryCount": 0, "expectedItemCount": 0, "idempotencyKey": key(71), "confirmed": true})
	if len(added.AddedMenuItemPublicIDs) == 0 || added.AddedMenuItemPublicIDs[0] != itemCoffee {
		t.Fatalf("add %+v", added)
	}
	target := must[itemTargetB](e, http.StatusOK, http.MethodGet, itemPath(helsinki, menu, itemCoffee), helsinki, nil)
	if !target.CanEdit || target.Item.MenuItemPublicID != itemCoffee {
		t.Fatalf("target %+v", target)
	}
	edited := must[itemEditB](e, http.StatusOK, http.MethodPatch, itemPath(helsinki, menu, itemCoffee), helsinki,
		patchBody(72, target.Version, map[string]any{"priceMinor": 390}))
	if edited.Item.PriceMinor != 390 || edited.MenuPublicID != menu {
		t.Fatalf("edit %+v", edited)
	}
	active := must[menuWriteB](e, http.StatusOK, http.MethodPut, menus(helsinki)+"/active", helsinki, map[string]any{
		"menuPublicId": menu, "expectedCategoryCount": 1, "expectedItemCount": 1, "expectedCurrentActiveMenuPublicId": menuMain,
		"idempotencyKey": key(73), "confirmed": true})
	if val(active.PreviousActiveMenuPublicID) != menuMain || !active.Menu.ActiveForPos {
		t.Fatalf("active %+v", active)
	}
	online := must[menuWriteB](e, http.StatusOK, http.MethodPut, menus(helsinki)+"/online", helsinki, map[string]any{
		"menuPublicId": menu, "expectedCategoryCount": 1, "expectedItemCount": 1, "expectedCurrentOnlineMenuPublicId": menuMain,
		"idempotencyKey": key(74), "confirmed": true})
	if val(online.PreviousOnlineMenuPublicID) != menuMain || !online.Menu.OnlineOrdering {
		t.Fatalf("online %+v", online)
	}
	// Conflicts and replays keep their set-B names.
	again := must[menuWriteB](e, http.StatusOK, http.MethodPut, menus(helsinki)+"/online", helsinki, map[string]any{
		"menuPublicId": menu, "expectedCategoryCount": 1, "expectedItemCount": 1, "expectedCurrentOnlineMenuPublicId": menuMain,
		"idempotencyKey": key(74), "confirmed": true})
	if !again.Replayed || val(again.PreviousOnlineMenuPublicID) != menuMain {
		t.Fatalf("replay %+v", again)
	}

	for name, b := range map[string]map[string]any{
		"set-A menuId":     {"menuId": menu, "expectedCategoryCount": 1, "expectedItemCount": 1, "expectedCurrentActiveMenuPublicId": menu, "idempotencyKey": key(75), "confirmed": true},
		"set-A current id": {"menuPublicId": menu, "expectedCategoryCount": 1, "expectedItemCount": 1, "expectedCurrentPosMenuId": menu, "idempotencyKey": key(76), "confirmed": true},
	} {
		t.Run(name, func(t *testing.T) {
			e.use(t)
			e.errorOf(http.StatusBadRequest, http.MethodPut, menus(helsinki)+"/active", helsinki, b)
		})
	}
	e.use(t)
	if msg := e.errorOf(http.StatusBadRequest, http.MethodPatch, itemPath(helsinki, menu, itemCoffee), helsinki,
		patchBody(77, "v1", map[string]any{"basePriceMinor": 1})); !strings.Contains(msg, "basePriceMinor") {
		t.Fatal(msg)
	}
	// The domain's messages name set-B fields too.
	if msg := e.errorOf(http.StatusBadRequest, http.MethodPatch, itemPath(helsinki, menu, itemCoffee), helsinki,
		patchBody(79, "v1", map[string]any{"priceMinor": -1})); !strings.Contains(msg, "changes.priceMinor must be") {
		t.Fatal(msg)
	}
	e.Unchecked = true
	e.errorOf(http.StatusNotFound, http.MethodPut, menus(helsinki)+"/pos", helsinki, map[string]any{
		"menuPublicId": menu, "expectedCategoryCount": 1, "expectedItemCount": 1, "expectedCurrentActiveMenuPublicId": menu, "idempotencyKey": key(78), "confirmed": true})
}

// With the database unreachable, reads answer 503 service_unavailable and
// writes 503 capability_disabled, with no internals in the body.
func TestDatabaseUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := database.Open(ctx, database.Config{URL: config.Secret("postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")}, "menus")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	keys := servicetest.Keys(t)
	h := &api.Handlers{Repo: &store.Store{DB: db.Gorm}, Keys: keys, IngestToken: token, NamingSet: api.NamingA}
	app := h.App(nil)
	c := servicetest.NewClient(t, app, keys, allScopes...)
	c.ClientID, c.Tenants = "c", tenants
	e := &env{Client: c, t: t, app: app, naming: api.NamingA}
	for _, path := range []string{menus(helsinki), items(helsinki, menuMain), itemPath(helsinki, menuMain, itemCake)} {
		if msg := e.errorOf(http.StatusServiceUnavailable, http.MethodGet, path, helsinki, nil); !strings.HasPrefix(msg, "service_unavailable") {
			t.Fatalf("%s: %s", path, msg)
		}
	}
	for _, w := range []struct {
		method, path string
		body         any
	}{
		{http.MethodPost, menus(helsinki), newMenu{Name: "X", IdempotencyKey: key(80)}},
		{http.MethodPost, items(helsinki, menuDraft), addBody(81, 1, 1, itemCake)},
		{http.MethodPatch, itemPath(helsinki, menuDraft, itemSpecial), patchBody(82, "v1", map[string]any{"visible": false})},
		{http.MethodPut, menus(helsinki) + "/pos", setBody(83, menuMain, 3, 4, "expectedCurrentPosMenuId", nil)},
		{http.MethodPut, menus(helsinki) + "/online", setBody(84, menuMain, 3, 4, "expectedCurrentOnlineMenuId", nil)},
		{http.MethodPost, batchPath(helsinki), newDraftBatch("5d1e7c3a-0000-4000-8000-000000000090", "X")},
	} {
		msg := e.errorOf(http.StatusServiceUnavailable, w.method, w.path, helsinki, w.body)
		if !strings.HasPrefix(msg, "capability_disabled") || strings.Contains(msg, "127.0.0.1") {
			t.Fatalf("%s %s: %s", w.method, w.path, msg)
		}
	}
}
