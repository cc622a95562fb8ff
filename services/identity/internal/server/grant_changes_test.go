package server_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/identity/internal/domain"
)

// grantChanges reads the list the gateway and the events service follow,
// since the previous answer's now (none: from here on).
func (e *env) grantChanges(t *testing.T, since time.Time) contracts.GrantChanges {
	t.Helper()
	path := contracts.GrantChangesPath
	if !since.IsZero() {
		path += "?since=" + url.QueryEscape(since.Format(time.RFC3339Nano))
	}
	var out contracts.GrantChanges
	if st := e.call(t, http.MethodGet, path, nil, &out, map[string]string{internalctx.Header: e.ring.Sign(internalctx.Context{})}); st != http.StatusOK {
		t.Fatalf("GET %s: %d", path, st)
	}
	return out
}

func changed(c contracts.GrantChanges) (grants, clients []string) {
	for _, x := range c.Changes {
		if x.GrantID != "" {
			grants = append(grants, x.GrantID)
		} else {
			clients = append(clients, x.ClientID)
		}
	}
	return grants, clients
}

// TestGrantChanges: every write that can narrow what a grant allows is
// listed, whatever wrote it; a write that cannot (the record of use) is
// not; a list read again from its own since repeats nothing new, and a
// since beyond the overlap lists nothing older.
func TestGrantChanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := seedAccounts(t, e)
	ctx := context.Background()
	start := e.grantChanges(t, time.Time{})
	if len(start.Changes) != 0 || start.Now.IsZero() {
		t.Fatalf("first answer: %+v", start)
	}
	// No write that leaves what grants allow as it was is listed.
	if err := e.parts.Store.RecordGrantUse(ctx, map[string]time.Time{g.a: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if st := e.admin(t, http.MethodPost, "/admin/v1/directory/import", seedDoc(), nil); st != http.StatusOK {
		t.Fatalf("import again: %d", st)
	}
	if c := e.grantChanges(t, start.Now); len(c.Changes) != 0 {
		t.Fatalf("changes without a narrowing write: %+v", c.Changes)
	}

	for _, c := range []struct {
		name          string
		write         func(t *testing.T)
		grant, client string
		grants        []string
	}{
		{name: "grant revoked on the admin API", grants: []string{g.a}, write: func(t *testing.T) {
			if st := e.admin(t, http.MethodPost, "/admin/v1/grants/"+g.a+"/revoke", nil, nil); st != http.StatusOK {
				t.Fatalf("revoke: %d", st)
			}
		}},
		{name: "access token revoked", grants: []string{g.b}, write: func(t *testing.T) {
			if err := e.parts.Store.RevokeAccessTokenID(ctx, g.b, "jti-1", time.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "client suspended", client: "conf-partner", write: func(t *testing.T) {
			if st := e.admin(t, http.MethodPost, "/admin/v1/clients/conf-partner/suspend", nil, nil); st != http.StatusOK {
				t.Fatalf("suspend: %d", st)
			}
		}},
		{name: "client scopes narrowed", client: "demo-partner", write: func(t *testing.T) {
			if st := e.admin(t, http.MethodPatch, "/admin/v1/clients/demo-partner", domain.ClientUpdate{AllowedScopes: []string{"svc.restaurant.read"}}, nil); st != http.StatusOK {
				t.Fatalf("update client: %d", st)
			}
		}},
		{name: "a restaurant left the organization", grants: []string{g.north}, write: func(t *testing.T) {
			doc := seedDoc()
			for i, r := range doc.Restaurants {
				if r.RestaurantID == restB {
					doc.Restaurants[i].OrganizationIDs = []string{}
				}
			}
			if st := e.admin(t, http.MethodPost, "/admin/v1/directory/import", doc, nil); st != http.StatusOK {
				t.Fatalf("import: %d", st)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := e.grantChanges(t, time.Time{})
			c.write(t)
			got := e.grantChanges(t, before.Now)
			grants, clients := changed(got)
			for _, id := range c.grants {
				if !slices.Contains(grants, id) {
					t.Errorf("grant %s not listed: %+v", id, got.Changes)
				}
			}
			if c.client != "" && !slices.Contains(clients, c.client) {
				t.Errorf("client %s not listed: %+v", c.client, got.Changes)
			}
			if len(grants)+len(clients) == 0 {
				t.Fatal("nothing listed")
			}
		})
	}

	// Read again from an answer's own now, the list repeats only what is
	// within the overlap; from beyond it, nothing.
	all := e.grantChanges(t, start.Now)
	if len(all.Changes) < 5 {
		t.Fatalf("changes since the start: %+v", all.Changes)
	}
	if later := e.grantChanges(t, all.Now.Add(contracts.GrantChangesOverlap+time.Second)); len(later.Changes) != 0 {
		t.Fatalf("changes listed beyond the overlap: %+v", later.Changes)
	}
	var bad struct{ Error string }
	if st := e.call(t, http.MethodGet, contracts.GrantChangesPath+"?since=yesterday", nil, &bad, map[string]string{internalctx.Header: e.ring.Sign(internalctx.Context{})}); st != http.StatusBadRequest {
		t.Fatalf("since=yesterday: %d", st)
	}
	if st := e.call(t, http.MethodGet, contracts.GrantChangesPath, nil, nil, nil); st != http.StatusUnauthorized && st != http.StatusForbidden {
		t.Fatalf("without the internal context: %d", st)
	}
}
