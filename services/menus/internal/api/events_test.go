package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"partnerapi.dev/services/contracts"
)

type event struct {
	Type, RestaurantID string
	Data               menuEvent
	// Actor is the client, grant and user of the request that recorded it.
	Actor [3]string
}

// menuEvent is what the menu events carry: menu.created and menu.updated
// the menu (and the items written, if any), menu.published the menu, its
// publication and the menu it replaced.
type menuEvent struct {
	Menu           contracts.MenuSummary `json:"menu"`
	ItemIDs        []string              `json:"itemIds"`
	Publication    string                `json:"publication"`
	ReplacedMenuID *string               `json:"replacedMenuId"`
}

// takeEvents returns the events recorded since the last call, in order,
// and removes them (as the relay does once they are acknowledged).
func (e *env) takeEvents() []event {
	e.t.Helper()
	var rows []struct{ Type, RestaurantID, Data, ClientID, GrantID, UserID string }
	if err := e.db.Gorm.Raw(`WITH d AS (DELETE FROM outbox_events RETURNING pos, type, restaurant_id, data::text, client_id, grant_id, user_id)
SELECT type, restaurant_id, data, coalesce(client_id, '') AS client_id, coalesce(grant_id, '') AS grant_id, coalesce(user_id, '') AS user_id FROM d ORDER BY pos`).Scan(&rows).Error; err != nil {
		e.t.Fatal(err)
	}
	out := make([]event, len(rows))
	for i, r := range rows {
		out[i] = event{Type: r.Type, RestaurantID: r.RestaurantID, Actor: [3]string{r.ClientID, r.GrantID, r.UserID}}
		if err := json.Unmarshal([]byte(r.Data), &out[i].Data); err != nil {
			e.t.Fatal(err)
		}
	}
	return out
}

// wantEvent checks that exactly one event of typ was recorded for helsinki
// (typ "" for none) and returns its data.
func (e *env) wantEvent(step, typ string) menuEvent {
	e.t.Helper()
	got := e.takeEvents()
	if typ == "" {
		if len(got) != 0 {
			e.t.Fatalf("%s: recorded %+v, want none", step, got)
		}
		return menuEvent{}
	}
	if len(got) != 1 || got[0].Type != typ || got[0].RestaurantID != helsinki {
		e.t.Fatalf("%s: recorded %+v, want one %s", step, got, typ)
	}
	// Every write here is a partner's: the event names its authorization.
	if want := [3]string{e.ClientID, "g", "u"}; got[0].Actor != want {
		e.t.Fatalf("%s: recorded by %v, want %v", step, got[0].Actor, want)
	}
	return got[0].Data
}

// Each write records exactly its event in its transaction; a replay, a
// rejected write or a publish that changes nothing records none.
func TestWritesRecordMenuEvents(t *testing.T) {
	t.Parallel()
	e := fixtureEnv(newEnv(t))
	e.wantEvent("ingestion", "")

	body := newMenu{Name: "Winter", IdempotencyKey: key(1)}
	created := e.write(http.StatusCreated, http.MethodPost, menus(helsinki), body)
	if d := e.wantEvent("create", contracts.EventMenuCreated); d.Menu != created.Menu {
		t.Fatalf("created event %+v, answer %+v", d, created.Menu)
	}
	e.write(http.StatusCreated, http.MethodPost, menus(helsinki), body)
	e.wantEvent("create replayed", "")
	e.errorOf(http.StatusConflict, http.MethodPost, menus(helsinki), helsinki, newMenu{Name: "Other", IdempotencyKey: key(1)})
	e.wantEvent("key reused", "")

	add := addBody(2, 1, 1, itemCake)
	added := e.write(http.StatusOK, http.MethodPost, items(helsinki, menuDraft), add)
	d := e.wantEvent("add items", contracts.EventMenuUpdated)
	if d.Menu != added.Menu || !slices.Equal(d.ItemIDs, []string{itemCake}) {
		t.Fatalf("add event %+v, answer %+v", d, added)
	}
	e.write(http.StatusOK, http.MethodPost, items(helsinki, menuDraft), add)
	e.wantEvent("add replayed", "")
	e.errorOf(http.StatusConflict, http.MethodPost, items(helsinki, menuDraft), helsinki, addBody(3, 1, 1, itemCoffee))
	e.wantEvent("stale counts", "")

	version := e.inspect(menuDraft, itemSpecial).Version
	must[itemEdit](e, http.StatusOK, http.MethodPatch, itemPath(helsinki, menuDraft, itemSpecial), helsinki, patchBody(4, version, map[string]any{"basePriceMinor": 1600}))
	if d := e.wantEvent("edit item", contracts.EventMenuUpdated); !slices.Equal(d.ItemIDs, []string{itemSpecial}) {
		t.Fatalf("edit event %+v", d)
	}
	e.errorOf(http.StatusConflict, http.MethodPatch, itemPath(helsinki, menuDraft, itemSpecial), helsinki, patchBody(5, version, map[string]any{"basePriceMinor": 1700}))
	e.wantEvent("stale version", "")

	e.write(http.StatusOK, http.MethodPut, menus(helsinki)+"/pos", setBody(6, menuDraft, 1, 2, "expectedCurrentPosMenuId", menuMain))
	d = e.wantEvent("set POS", contracts.EventMenuPublished)
	if d.Publication != "pos" || val(d.ReplacedMenuID) != menuMain || d.Menu.MenuID != menuDraft {
		t.Fatalf("published event %+v", d)
	}
	e.write(http.StatusOK, http.MethodPut, menus(helsinki)+"/pos", setBody(7, menuDraft, 1, 2, "expectedCurrentPosMenuId", menuDraft))
	e.wantEvent("set POS to the current one", "")
	e.write(http.StatusOK, http.MethodPut, menus(helsinki)+"/online", setBody(8, menuDraft, 1, 2, "expectedCurrentOnlineMenuId", menuMain))
	if d := e.wantEvent("set online", contracts.EventMenuPublished); d.Publication != "online" {
		t.Fatalf("online event %+v", d)
	}

	e.Scopes = catalogScopes
	res := e.batch(http.StatusCreated, helsinki, newDraftBatch("7e000000-0000-4000-8000-000000000001", "Imported"))
	if d := e.wantEvent("catalog batch into a new draft", contracts.EventMenuCreated); d.Menu.MenuID != res.Menu.MenuID {
		t.Fatalf("batch event %+v", d)
	}
	e.batch(http.StatusCreated, helsinki, newDraftBatch("7e000000-0000-4000-8000-000000000001", "Imported"))
	e.wantEvent("catalog batch replayed", "")
	menuID, rev := res.Menu.MenuID, res.Revision
	doc := document("Imported")
	doc.MenuCategories, doc.MenuItems, doc.Combos = doc.MenuCategories[:1], doc.MenuItems[:1], nil
	doc.MenuItems[0].Ref, doc.MenuCategories[0].Ref, doc.MenuItems[0].CategoryRef = "salmon2", "soups2", "soups2"
	doc.OptionGroups, doc.MenuItems[0].OptionGroupAssignments, doc.ProductCategories, doc.Products = nil, nil, nil, nil
	e.batch(http.StatusOK, helsinki, contracts.CatalogBatch{BatchID: "7e000000-0000-4000-8000-000000000002", Document: doc,
		Target: contracts.CatalogBatchTarget{Mode: contracts.CatalogTargetExistingDraft, MenuID: &menuID, ExpectedRevision: &rev}})
	if d := e.wantEvent("catalog batch into the draft", contracts.EventMenuUpdated); d.Menu.ItemCount != 3 {
		t.Fatalf("batch update event %+v", d)
	}
}
