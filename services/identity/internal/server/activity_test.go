package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/contracts"
	idconfig "partnerapi.dev/services/identity/internal/config"
)

// eventsStandIn answers the connected-apps question as the events service
// does (its own tests hold that side): one published menu and one webhook
// endpoint of grant for, nothing for other grants; down answers 503.
type eventsStandIn struct {
	srv   *httptest.Server
	mu    sync.Mutex
	asked []contracts.ConnectedAppsQuery
	down  bool
}

func newEventsStandIn(t *testing.T, keys *internalctx.Keyring, grant *string) *eventsStandIn {
	s := &eventsStandIn{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var q contracts.ConnectedAppsQuery
		if _, err := keys.Verify(r.Header.Get(internalctx.Header)); err != nil || r.URL.Path != contracts.ConnectedAppsPath || json.NewDecoder(r.Body).Decode(&q) != nil {
			w.WriteHeader(401)
			return
		}
		s.mu.Lock()
		s.asked = append(s.asked, q)
		down := s.down
		s.mu.Unlock()
		if down {
			w.WriteHeader(503)
			return
		}
		var out contracts.ConnectedAppsActivity
		for _, app := range q.Apps {
			a := contracts.ConnectedAppActivity{GrantID: app.GrantID, Events: []contracts.ActivityEvent{}, WebhookHosts: []contracts.WebhookHost{}}
			if app.GrantID == *grant && slices.Contains(q.RestaurantIDs, restA) {
				a.Events = append(a.Events, contracts.ActivityEvent{ID: "evt_1", Type: contracts.EventMenuPublished, RestaurantID: restA,
					OccurredAt: time.Date(2026, 11, 15, 9, 30, 0, 0, time.UTC), UserID: userOwner,
					Data: json.RawMessage(`{"menu":{"menuId":"m","name":"Lunch"},"publication":"pos","replacedMenuId":null}`)})
				a.WebhookHosts = append(a.WebhookHosts, contracts.WebhookHost{Host: "hooks.partner.example", RestaurantID: restA})
			}
			out.Apps = append(out.Apps, a)
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// TestConnectedAppsActivity: each app shows its recent changes on the
// user's restaurants in words, with the user whose approval made them, and
// its webhook hosts; identity asks only about the viewer's restaurants;
// without the events service the rest of the page still shows.
func TestConnectedAppsActivity(t *testing.T) {
	t.Parallel()
	keys, err := internalctx.ParseKeys(ctxKeys)
	if err != nil {
		t.Fatal(err)
	}
	var grantA string
	events := newEventsStandIn(t, keys, &grantA)
	e := newEnv(t, func(c *idconfig.Config) { c.Events.URL = events.srv.URL })
	g := seedAccounts(t, e)
	grantA = g.a

	events.mu.Lock()
	events.asked = nil
	events.mu.Unlock()
	b, list := signIn(t, e, ownerEmail, "/account")
	events.mu.Lock()
	if n := len(events.asked); n != 1 || len(events.asked[0].Apps) != 4 {
		t.Errorf("the page asked the events service %d times (%+v), want once for the page's four apps", n, events.asked)
	}
	events.mu.Unlock()
	s := appSection(t, list.body, g.a)
	for _, want := range []string{"Set “Lunch” as the POS menu at Alpha Bistro", "15 November 2026, 09:30 UTC, approved by Olivia Owner", "hooks.partner.example (Alpha Bistro)"} {
		if !strings.Contains(s, want) {
			t.Errorf("grant a lacks %q:\n%s", want, s)
		}
	}
	if s := appSection(t, list.body, g.north); !strings.Contains(s, "No changes to your restaurants") || strings.Contains(s, "Lunch") {
		t.Errorf("grant north shows another grant's changes:\n%s", s)
	}
	if p := b.get("/account/authorizations/" + g.a); !strings.Contains(p.body, "Set “Lunch” as the POS menu at Alpha Bistro") {
		t.Errorf("confirmation page lacks the activity:\n%s", p.body)
	}

	// Eve administers East Group only: identity asks about Delta Deli and
	// nothing of the others'.
	events.mu.Lock()
	events.asked = nil
	events.mu.Unlock()
	_, eve := signIn(t, e, eveEmail, "/account")
	if strings.Contains(eve.body, "Lunch") {
		t.Errorf("another organization's administrator sees the changes")
	}
	events.mu.Lock()
	if len(events.asked) == 0 {
		t.Errorf("Eve's page did not ask the events service")
	}
	for _, q := range events.asked {
		if !slices.Equal(q.RestaurantIDs, []string{restD}) || len(q.Apps) != 1 || q.Apps[0].GrantID != g.east {
			t.Errorf("asked the events service %+v for Eve", q)
		}
	}
	events.down = true
	events.mu.Unlock()

	p := b.get("/account")
	if p.status != http.StatusOK || !strings.Contains(appSection(t, p.body, g.a), "cannot be shown right now") || strings.Contains(p.body, "Lunch") {
		t.Errorf("page with the events service down: %d\n%s", p.status, p.body)
	}
}
