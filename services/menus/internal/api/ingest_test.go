package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"partnerapi.dev/services/contracts"
)

// Loading the same catalogs again changes nothing: no menu revision or item
// version moves. A changed line replaces what it says and removes entries a
// menu no longer has.
func TestIngestIsIdempotent(t *testing.T) {
	t.Parallel()
	e := fixtureEnv(newEnv(t))
	e.Scopes = catalogScopes
	before := e.target(helsinki, menuMain)
	e.Scopes = allScopes
	version := e.inspect(menuDraft, itemSpecial).Version
	e.ingest(fixture()...)
	e.Scopes = catalogScopes
	if after := e.target(helsinki, menuMain); after.Revision != before.Revision {
		t.Fatalf("revision moved on a repeated load: %s -> %s", before.Revision, after.Revision)
	}
	e.Scopes = allScopes
	if v := e.inspect(menuDraft, itemSpecial).Version; v != version {
		t.Fatalf("version moved on a repeated load: %s -> %s", version, v)
	}
	for table, n := range map[string]int{"menus": 4, "items": 7, "menu_items": 7, "menu_categories": 6, "item_option_groups": 1} {
		if got := e.count(table); got != n {
			t.Errorf("%s: %d rows, want %d", table, got, n)
		}
	}

	changed := fixture()
	changed[0].Items[2].Availability = "sold_out" // the cake
	changed[0].Menus[0].Entries = changed[0].Menus[0].Entries[:2]
	e.ingest(changed...)
	e.Scopes = catalogScopes
	after := e.target(helsinki, menuMain)
	if after.Revision == before.Revision || after.Menu.ItemCount != 2 || after.Menu.CategoryCount != 1 {
		t.Fatalf("changed load: %+v", after)
	}

	for name, body := range map[string]string{
		"unknown field":   `{"restaurantId":"` + helsinki + `","extra":1}`,
		"unknown item":    `{"restaurantId":"` + helsinki + `","menus":[{"id":"` + menuMain + `","name":"M","entries":[{"itemId":"` + itemCake + `"}]}]}`,
		"bad restaurant":  `{"restaurantId":"x"}`,
		"bad pos menu id": `{"restaurantId":"` + helsinki + `","posMenuId":"` + menuMain + `"}`,
	} {
		req := httptest.NewRequest(http.MethodPost, contracts.MenusIngestPath, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := e.app.Test(req)
		if err != nil || resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("%s: %v %v", name, resp.StatusCode, err)
		}
	}
	req := httptest.NewRequest(http.MethodPost, contracts.MenusIngestPath, strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer wrong-token-0123456789")
	if resp, _ := e.app.Test(req); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong token: %d", resp.StatusCode)
	}
}
