package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/contracts"
)

const (
	grant1 = "9a000000-0000-4000-8000-000000000001"
	grant2 = "9a000000-0000-4000-8000-000000000002"
)

// connectedApps asks the connected-apps question as identity does; signed
// false leaves the internal context out.
func (e *env) connectedApps(q contracts.ConnectedAppsQuery, signed bool) (int, contracts.ConnectedAppsActivity) {
	e.t.Helper()
	raw, _ := json.Marshal(q)
	req := httptest.NewRequest("POST", contracts.ConnectedAppsPath, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	if signed {
		req.Header.Set(internalctx.Header, e.keys.Sign(internalctx.Context{RequestID: "account"}))
	}
	resp, err := e.app.Test(req, 30_000)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var out contracts.ConnectedAppsActivity
	if resp.StatusCode == 200 {
		if err := json.Unmarshal(body, &out); err != nil {
			e.t.Fatalf("%s", body)
		}
	}
	return resp.StatusCode, out
}

// connectedApp asks about one app.
func (e *env) connectedApp(client, grant string, restaurants []string, limit int) contracts.ConnectedAppActivity {
	e.t.Helper()
	st, got := e.connectedApps(contracts.ConnectedAppsQuery{Apps: []contracts.ConnectedAppRef{{ClientID: client, GrantID: grant}}, RestaurantIDs: restaurants, Limit: limit}, true)
	if st != 200 || len(got.Apps) != 1 || got.Apps[0].GrantID != grant {
		e.t.Fatalf("connected app %s: %d %+v", grant, st, got)
	}
	return got.Apps[0]
}

// TestConnectedAppActivity: events keep the authorization that made them;
// the connected-apps query lists one grant's events on the restaurants
// asked for, newest first, and its client's webhook hosts only; partners
// never see who made a change.
func TestConnectedAppActivity(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	by := func(r, typ, grant string) contracts.EventRecord {
		x := ev(r, typ)
		x.Actor = &contracts.EventActor{ClientID: "client-1", GrantID: grant, UserID: "user-owner"}
		return x
	}
	first, second := by(restA, contracts.EventOrderCreated, grant1), by(restA, contracts.EventOrderUpdated, grant1)
	otherGrant, otherRestaurant, nobody := by(restA, contracts.EventOrderUpdated, grant2), by(restB, contracts.EventOrderCreated, grant1), ev(restA, contracts.EventOrderUpdated)
	e.appendOK(first, otherGrant, otherRestaurant, nobody)
	e.appendOK(second)
	create := createBody{URL: "https://hooks.partner.example/in?token=s3cret", EventTypes: []string{"order.created"},
		IdempotencyKey: "11111111-1111-4111-8111-111111111111"}
	if r := e.call("POST", "/v1/restaurants/"+restA+"/webhook-endpoints", "client-1", manage, create); r.status != 201 {
		t.Fatalf("create endpoint: %d %s", r.status, r.body)
	}

	q := contracts.ConnectedAppsQuery{Apps: []contracts.ConnectedAppRef{{ClientID: "client-1", GrantID: grant1}}, RestaurantIDs: []string{restA}, Limit: 10}
	if st, _ := e.connectedApps(q, false); st != 401 {
		t.Fatalf("without the signed context: %d", st)
	}
	got := e.connectedApp("client-1", grant1, []string{restA}, 10)
	if len(got.Events) != 2 || got.Events[0].ID != second.ID || got.Events[1].ID != first.ID || got.Events[0].UserID != "user-owner" {
		t.Fatalf("activity of grant 1 on restaurant A: %+v", got)
	}
	if len(got.WebhookHosts) != 1 || got.WebhookHosts[0] != (contracts.WebhookHost{Host: "hooks.partner.example", RestaurantID: restA}) {
		t.Fatalf("webhook hosts: %+v", got.WebhookHosts)
	}
	if got := e.connectedApp("client-1", grant1, []string{restA}, 1); len(got.Events) != 1 || got.Events[0].ID != second.ID {
		t.Fatalf("limit 1: %+v", got.Events)
	}
	if got := e.connectedApp("client-1", grant1, []string{restB}, 10); len(got.Events) != 1 || got.Events[0].ID != otherRestaurant.ID || len(got.WebhookHosts) != 0 {
		t.Fatalf("restaurant B: %+v", got)
	}
	// One question for several apps: each gets its own grant's events and
	// its own client's hosts, in the order asked.
	st, all := e.connectedApps(contracts.ConnectedAppsQuery{Apps: []contracts.ConnectedAppRef{{ClientID: "client-2", GrantID: grant2},
		{ClientID: "client-1", GrantID: grant1}, {ClientID: "client-3", GrantID: "9a000000-0000-4000-8000-000000000003"}}, RestaurantIDs: []string{restA, restB}, Limit: 10}, true)
	if st != 200 || len(all.Apps) != 3 || all.Apps[0].GrantID != grant2 || len(all.Apps[0].Events) != 1 || all.Apps[0].Events[0].ID != otherGrant.ID ||
		len(all.Apps[0].WebhookHosts) != 0 || len(all.Apps[1].Events) != 3 || len(all.Apps[1].WebhookHosts) != 1 ||
		all.Apps[2].Events == nil || len(all.Apps[2].Events) != 0 || all.Apps[2].WebhookHosts == nil {
		t.Fatalf("three apps at once: %d %+v", st, all)
	}
	one := contracts.ConnectedAppRef{ClientID: "client-1", GrantID: grant1}
	for name, bad := range map[string]contracts.ConnectedAppsQuery{
		"no limit":       {Apps: []contracts.ConnectedAppRef{one}, RestaurantIDs: []string{restA}},
		"no app":         {RestaurantIDs: []string{restA}, Limit: 5},
		"too many apps":  {Apps: make([]contracts.ConnectedAppRef, contracts.MaxConnectedApps+1), RestaurantIDs: []string{restA}, Limit: 5},
		"bad grant":      {Apps: []contracts.ConnectedAppRef{{ClientID: "client-1", GrantID: "g"}}, RestaurantIDs: []string{restA}, Limit: 5},
		"bad restaurant": {Apps: []contracts.ConnectedAppRef{one}, RestaurantIDs: []string{"x'"}, Limit: 5},
	} {
		if st, _ := e.connectedApps(bad, true); st != 400 {
			t.Errorf("%s: %d", name, st)
		}
	}

	// The feed and a refused actor: who made a change stays inside.
	r, page := e.feed("/v1/restaurants/"+restA+"/events", []string{contracts.ScopeRestaurantRead, contracts.ScopeOrdersRead})
	if r.status != 200 || len(page.Events) != 4 {
		t.Fatalf("feed: %d %s", r.status, r.body)
	}
	for _, leak := range []string{grant1, "user-owner", "actor"} {
		if strings.Contains(string(r.body), leak) {
			t.Errorf("the feed shows %q: %s", leak, r.body)
		}
	}
	bad := ev(restA, contracts.EventOrderCreated)
	bad.Actor = &contracts.EventActor{ClientID: "client-1", GrantID: "not-a-uuid"}
	if r := e.appendRaw(token, contracts.EventAppend{Source: "orders", Events: []contracts.EventRecord{bad}}); r.status != 400 {
		t.Errorf("append with a malformed actor: %d %s", r.status, r.body)
	}
}
