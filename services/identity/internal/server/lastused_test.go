package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/contracts"
)

// appSection is the part of the connected-apps page about one grant.
func appSection(t *testing.T, body, grantID string) string {
	t.Helper()
	i := strings.Index(body, `aria-labelledby="app-`+grantID+`"`)
	if i < 0 {
		t.Fatalf("no section for grant %s:\n%s", grantID, body)
	}
	s := body[i:]
	if j := strings.Index(s, "</section>"); j >= 0 {
		s = s[:j]
	}
	return s
}

// TestConnectedAppsLastUsed: identity keeps the latest use the gateway
// sends per grant (an older or repeated one changes nothing, an unknown
// grant is skipped, a call without the signed context is refused), and the
// page shows it rounded.
func TestConnectedAppsLastUsed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := seedAccounts(t, e)
	now := time.Now().UTC().Truncate(time.Minute)
	send := func(uses ...contracts.GrantUse) int {
		return e.call(t, http.MethodPost, contracts.GrantUsePath, contracts.GrantUses{Uses: uses}, nil,
			map[string]string{internalctx.Header: e.ring.Sign(internalctx.Context{RequestID: "use"})})
	}
	if st := e.call(t, http.MethodPost, contracts.GrantUsePath, contracts.GrantUses{Uses: []contracts.GrantUse{{GrantID: g.b, UsedAt: now}}}, nil, nil); st != http.StatusUnauthorized {
		t.Fatalf("record of use without the signed context: %d", st)
	}
	if st := send(contracts.GrantUse{GrantID: g.a, UsedAt: now.Add(-20 * time.Minute)}, contracts.GrantUse{GrantID: g.north, UsedAt: now.Add(-3 * time.Hour)},
		contracts.GrantUse{GrantID: "00000000-0000-4000-8000-000000000000", UsedAt: now}, contracts.GrantUse{GrantID: "not-a-grant", UsedAt: now}); st != http.StatusNoContent {
		t.Fatalf("record of use: %d", st)
	}
	// Another replica's older record comes later: it changes nothing.
	if st := send(contracts.GrantUse{GrantID: g.a, UsedAt: now.Add(-50 * time.Minute)}); st != http.StatusNoContent {
		t.Fatalf("older record of use: %d", st)
	}
	_, list := signIn(t, e, ownerEmail, "/account")
	for id, want := range map[string]string{g.a: "Last used about 20 minutes ago.", g.north: "Last used about 3 hours ago.", g.b: "Not used yet."} {
		if s := appSection(t, list.body, id); !strings.Contains(s, want) {
			t.Errorf("grant %s: want %q in\n%s", id, want, s)
		}
	}
	var view struct {
		Data []struct {
			GrantID    string     `json:"grantId"`
			LastUsedAt *time.Time `json:"lastUsedAt"`
		} `json:"data"`
	}
	if st := e.admin(t, http.MethodGet, "/admin/v1/grants?userId="+userOwner, nil, &view); st != http.StatusOK {
		t.Fatalf("admin list of grants: %d", st)
	}
	found := false
	for _, x := range view.Data {
		if x.GrantID == g.a {
			found = true
			if x.LastUsedAt == nil || !x.LastUsedAt.Equal(now.Add(-20*time.Minute)) {
				t.Errorf("admin list: last use of grant a %v", x.LastUsedAt)
			}
		}
	}
	if !found {
		t.Errorf("admin list lacks grant a: %+v", view.Data)
	}
}
