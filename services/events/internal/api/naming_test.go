package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/events/internal/api"
)

// publishedEvent is a menu.published event as the menus service records it
// (set-A names).
func publishedEvent(r string) contracts.EventRecord {
	x := ev(r, contracts.EventMenuPublished)
	x.Data = json.RawMessage(`{"menu":{"menuId":"6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b","name":"Lunch & <dinner>","isPosMenu":true,"isOnlineMenu":false,"categoryCount":2,"itemCount":7},"publication":"pos","replacedMenuId":null}`)
	return x
}

// A deployment serving menu naming set B shows menu events with set-B
// names, as its REST answers; order events keep theirs.
func TestFeedFollowsTheMenuNamingSet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.skipSpec = true
	order := ev(restA, contracts.EventOrderCreated)
	order.Data = json.RawMessage(`{"orderId":"o-1","lines":[{"menuId":"m-1","catalogItemId":"c-1"}]}`)
	e.appendOK(publishedEvent(restA), order)
	h := &api.Handlers{Repo: e.store, Webhooks: e.store, Notify: e.listener, Keys: e.keys, Token: token, Secrets: e.store.Secrets, NamingSet: "B", Now: e.now}
	e.app = h.App(nil)
	r, p := e.feed("/v1/restaurants/"+restA+"/events", allScopes)
	if r.status != 200 || len(p.Events) != 2 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	menu := string(p.Events[0].Data)
	for _, want := range []string{`"menuPublicId":"6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"`, `"activeForPos":true`, `"onlineOrdering":false`, `"itemCount":7`} {
		if !strings.Contains(menu, want) {
			t.Fatalf("menu event data %s lacks %s", menu, want)
		}
	}
	for _, setA := range []string{`"menuId"`, `"isPosMenu"`, `"isOnlineMenu"`} {
		if strings.Contains(menu, setA) {
			t.Fatalf("menu event data %s has the set-A name %s", menu, setA)
		}
	}
	if got := string(p.Events[1].Data); !strings.Contains(got, `"menuId":"m-1","catalogItemId":"c-1"`) {
		t.Fatalf("order event data %s, want the order's names as recorded", got)
	}
}
