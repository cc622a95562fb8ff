package server_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"partnerapi.dev/services/contracts"
)

// revokedEvent is one authorization.revoked event in identity's outbox.
type revokedEvent struct {
	RestaurantID string
	contracts.AuthorizationRevoked
}

// revokedEvents reads the authorization.revoked events of grantID waiting in
// the outbox (no events service in these tests: nothing forwards them).
func (e *env) revokedEvents(t *testing.T, grantID string) []revokedEvent {
	t.Helper()
	var rows []struct {
		Type, RestaurantID string
		Data               []byte
	}
	if err := e.db.Gorm.Raw(`SELECT type, restaurant_id::text AS restaurant_id, data FROM outbox_events ORDER BY pos`).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	var out []revokedEvent
	for _, r := range rows {
		var ev revokedEvent
		if err := json.Unmarshal(r.Data, &ev.AuthorizationRevoked); err != nil {
			t.Fatal(err)
		}
		if r.Type != contracts.EventAuthorizationRevoked {
			t.Fatalf("identity recorded a %s event", r.Type)
		}
		if ev.AuthorizationID == grantID {
			ev.RestaurantID = r.RestaurantID
			out = append(out, ev)
		}
	}
	return out
}

// wantRevoked checks that grantID's revocation recorded exactly one
// authorization.revoked event per restaurant it covered, naming its client
// and who revoked it.
func (e *env) wantRevoked(t *testing.T, grantID, client, by string, restaurants ...string) {
	t.Helper()
	got := e.revokedEvents(t, grantID)
	var ids []string
	for _, ev := range got {
		if ev.ClientID != client || ev.RevokedBy != by || ev.RevokedAt.IsZero() {
			t.Errorf("event %+v, want client %s revoked by %s", ev, client, by)
		}
		ids = append(ids, ev.RestaurantID)
	}
	slices.Sort(ids)
	slices.Sort(restaurants)
	if !slices.Equal(ids, restaurants) {
		t.Fatalf("authorization.revoked events on %v, want one on each of %v", ids, restaurants)
	}
}

// Every way a grant ends records, in its transaction, an authorization.revoked
// event on each restaurant it covers, once; a refused or repeated revocation
// and a revocation that ends only a token record none.
func TestRevocationRecordsTheRevokedEvent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := seedAccounts(t, e)

	// The owner's page, refused: the grant also covers what Bea does not own.
	b, list := signIn(t, e, beaEmail, "/account")
	if r := b.revoke(g.north, csrfOf(t, list)); r.status != http.StatusForbidden {
		t.Fatalf("revoke beyond reach: %d", r.status)
	}
	e.wantRevoked(t, g.north, "demo-partner", contracts.RevokedByOwner)

	// The owner's page, allowed; a second revocation records nothing more.
	if r := b.revoke(g.b, csrfOf(t, list)); r.status != http.StatusSeeOther {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	if r := b.revoke(g.b, csrfOf(t, list)); r.status != http.StatusSeeOther {
		t.Fatalf("second revoke: %d", r.status)
	}
	e.wantRevoked(t, g.b, "conf-partner", contracts.RevokedByOwner, restB)

	// The admin API: an organization grant, on each restaurant it covers.
	for range 2 {
		if st := e.admin(t, http.MethodPost, "/admin/v1/grants/"+g.north+"/revoke", nil, nil); st != http.StatusOK {
			t.Fatalf("admin revoke: %d", st)
		}
	}
	e.wantRevoked(t, g.north, "demo-partner", contracts.RevokedByOperator, restB, restC)

	// The partner: revoking an access token ends only that token; revoking
	// the refresh token ends the authorization.
	o := e.opts("demo-partner")
	_, tok := e.approve(t, o)
	gid := grantID(t, tok.AccessToken)
	e.revoke(t, o, tok.AccessToken, "access_token")
	e.wantRevoked(t, gid, "demo-partner", contracts.RevokedByPartner)
	e.revoke(t, o, tok.RefreshToken, "refresh_token")
	if st := e.grantStatus(t, gid); st != "revoked" {
		t.Fatalf("grant %s after the partner revoked its refresh token", st)
	}
	e.wantRevoked(t, gid, "demo-partner", contracts.RevokedByPartner, restA)
}
