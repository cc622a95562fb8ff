package api_test

import (
	"net/http"
	"testing"

	"partnerapi.dev/pkg/servicetest"
)

// FuzzWriteBodies sends every partner write of the menus service, against
// a real database, with arbitrary text in one string of a valid body or an
// arbitrary body (servicetest.FuzzWriteBodies): never a 5xx, always the
// envelope, no internals, no quoted input. make fuzz runs it.
func FuzzWriteBodies(f *testing.F) {
	e := fixtureEnv(newEnv(f))
	writes := menusWrites(e)
	servicetest.FuzzWriteBodies(f, writes, func(t *testing.T, method, path string, body []byte) (int, []byte) {
		e.use(t)
		return e.do(method, path, helsinki, string(body))
	})
}

// TestWrongTypesAreNamed: a value of the wrong JSON type anywhere in a
// write body is a 400 naming its path as the body spells it.
func TestWrongTypesAreNamed(t *testing.T) {
	t.Parallel()
	e := fixtureEnv(newEnv(t))
	servicetest.CheckWrongTypes(t, menusWrites(e), func(t *testing.T, method, path string, body []byte) (int, []byte) {
		return e.do(method, path, helsinki, string(body))
	})
}

// menusWrites are the partner writes of the menus service with valid
// bodies over the Helsinki fixture.
func menusWrites(e *env) []servicetest.Write {
	version := e.inspect(menuDraft, itemSpecial).Version
	return []servicetest.Write{
		{Method: http.MethodPost, Path: menus(helsinki), Body: `{"name":"Winter","idempotencyKey":"{KEY}"}`},
		{Method: http.MethodPost, Path: items(helsinki, menuDraft), Body: `{"catalogItemIds":["` + itemCoffee + `"],"expectedCategoryCount":1,"expectedItemCount":1,"idempotencyKey":"{KEY}","confirmed":true}`},
		{Method: http.MethodPatch, Path: itemPath(helsinki, menuDraft, itemSpecial), Body: `{"expectedVersion":"` + version + `","changes":{"name":"Special","description":"Ask the staff","basePriceMinor":1650,"visible":true,"showInKitchen":false},"idempotencyKey":"{KEY}","confirmed":true}`},
		{Method: http.MethodPut, Path: menus(helsinki) + "/pos", Body: `{"menuId":"` + menuDraft + `","expectedCategoryCount":1,"expectedItemCount":1,"expectedCurrentPosMenuId":"` + menuMain + `","idempotencyKey":"{KEY}","confirmed":true}`},
		{Method: http.MethodPut, Path: menus(helsinki) + "/online", Body: `{"menuId":"` + menuLunch + `","expectedCategoryCount":1,"expectedItemCount":1,"expectedCurrentOnlineMenuId":"` + menuMain + `","idempotencyKey":"{KEY}","confirmed":true}`},
	}
}
