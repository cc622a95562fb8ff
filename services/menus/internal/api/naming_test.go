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

// Under naming set B every operation works with set-B names (answers are
// checked against the set-B document by env.do), set-A names in a body are
// unknown fields, and the POS menu lives at /menus/active only.
func TestNamingSetB(t *testing.T) {
	t.Parallel()
	e := fixtureEnv(newEnvNaming(t, api.NamingB))
	data := e.must(http.StatusOK, http.MethodGet, menus(helsinki), helsinki, nil)
	if data["activeMenuPublicId"] != menuMain || data["onlineMenuPublicId"] != menuMain {
		t.Fatalf("list %v", data)
	}
	first := list(data, "menus")[0].(map[string]any)
	if first["menuPublicId"] != menuDraft || first["activeForPos"] != false || first["onlineOrdering"] != false || first["menuId"] != nil {
		t.Fatalf("menu %v", first)
	}
	row := list(e.must(http.StatusOK, http.MethodGet, items(helsinki, menuMain)+"?limit=1", helsinki, nil), "items")[0].(map[string]any)
	if row["menuItemPublicId"] != itemSalmon || row["categoryPublicId"] != catSoups || row["priceMinor"] != 1680.0 || row["effectivePriceMinor"] != 1790.0 {
		t.Fatalf("item %v", row)
	}

	created := e.must(http.StatusCreated, http.MethodPost, menus(helsinki), helsinki, map[string]any{"name": "B draft", "idempotencyKey": key(70)})
	menu := created["menu"].(map[string]any)["menuPublicId"].(string)
	added := e.must(http.StatusOK, http.MethodPost, items(helsinki, menu), helsinki, map[string]any{
		"menuItemPublicIds": []string{itemCoffee}, "expectedCategoryCount": 0, "expectedItemCount": 0, "idempotencyKey": key(71), "confirmed": true})
	if added["addedMenuItemPublicIds"].([]any)[0] != itemCoffee {
		t.Fatalf("add %v", added)
	}
	target := e.must(http.StatusOK, http.MethodGet, itemPath(helsinki, menu, itemCoffee), helsinki, nil)
	if target["canEdit"] != true || target["item"].(map[string]any)["menuItemPublicId"] != itemCoffee {
		t.Fatalf("target %v", target)
	}
	edited := e.must(http.StatusOK, http.MethodPatch, itemPath(helsinki, menu, itemCoffee), helsinki,
		patchBody(72, target["version"].(string), map[string]any{"priceMinor": 390}))
	if edited["item"].(map[string]any)["priceMinor"] != 390.0 || edited["menuPublicId"] != menu {
		t.Fatalf("edit %v", edited)
	}
	active := e.must(http.StatusOK, http.MethodPut, menus(helsinki)+"/active", helsinki, map[string]any{
		"menuPublicId": menu, "expectedCategoryCount": 1, "expectedItemCount": 1, "expectedCurrentActiveMenuPublicId": menuMain,
		"idempotencyKey": key(73), "confirmed": true})
	if active["previousActiveMenuPublicId"] != menuMain || active["menu"].(map[string]any)["activeForPos"] != true {
		t.Fatalf("active %v", active)
	}
	online := e.must(http.StatusOK, http.MethodPut, menus(helsinki)+"/online", helsinki, map[string]any{
		"menuPublicId": menu, "expectedCategoryCount": 1, "expectedItemCount": 1, "expectedCurrentOnlineMenuPublicId": menuMain,
		"idempotencyKey": key(74), "confirmed": true})
	if online["previousOnlineMenuPublicId"] != menuMain || online["menu"].(map[string]any)["onlineOrdering"] != true {
		t.Fatalf("online %v", online)
	}
	// Conflicts and replays keep their set-B names.
	again := e.must(http.StatusOK, http.MethodPut, menus(helsinki)+"/online", helsinki, map[string]any{
		"menuPublicId": menu, "expectedCategoryCount": 1, "expectedItemCount": 1, "expectedCurrentOnlineMenuPublicId": menuMain,
		"idempotencyKey": key(74), "confirmed": true})
	if again["replayed"] != true || again["previousOnlineMenuPublicId"] != menuMain {
		t.Fatalf("replay %v", again)
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
		{http.MethodPost, menus(helsinki), map[string]any{"name": "X", "idempotencyKey": key(80)}},
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
