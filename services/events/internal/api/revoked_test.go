package api_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/services/contracts"
)

// revoked is an authorization.revoked event of client's grant on r.
func revoked(r, client, grant string) contracts.EventRecord {
	e := ev(r, contracts.EventAuthorizationRevoked)
	e.Data, _ = json.Marshal(contracts.AuthorizationRevoked{AuthorizationID: grant, ClientID: client,
		RevokedAt: time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC), RevokedBy: contracts.RevokedByOwner})
	return e
}

// An authorization.revoked event is on the restaurant's feed for its own
// client only: another partner reading the feed skips it (and advances), so
// nobody learns which other applications the restaurant had connected.
func TestFeedShowsARevocationToItsClientOnly(t *testing.T) {
	e := newEnv(t)
	mine := revoked(restA, "client-1", "6f1f2a52-8c8b-4d43-9a0e-6d1f5d1d0a01")
	e.appendOK(revoked(restA, "client-2", "6f1f2a52-8c8b-4d43-9a0e-6d1f5d1d0a02"), mine, ev(restA, contracts.EventOrderCreated))
	r, p := e.feed("/v1/restaurants/"+restA+"/events", allScopes) // read as client-1
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if len(p.Events) != 2 || p.Events[0].ID != mine.ID || p.Events[0].Type != contracts.EventAuthorizationRevoked || p.Events[0].Seq != 2 ||
		p.Events[1].Type != contracts.EventOrderCreated || p.NextAfter != 3 || p.HasMore {
		t.Fatalf("page %+v", p)
	}
	if !strings.Contains(string(r.body), `"authorizationId":"6f1f2a52-8c8b-4d43-9a0e-6d1f5d1d0a01"`) || strings.Contains(string(r.body), "client-2") {
		t.Fatalf("body %s", r.body)
	}
}

func TestAppendRefusesARevocationWithoutItsAuthorization(t *testing.T) {
	e := newEnv(t)
	for _, data := range []string{`{}`, `{"authorizationId":"grant-1","clientId":"c"}`, `{"authorizationId":"6f1f2a52-8c8b-4d43-9a0e-6d1f5d1d0a01"}`} {
		bad := ev(restA, contracts.EventAuthorizationRevoked)
		bad.Data = json.RawMessage(data)
		if r := e.appendRaw(token, contracts.EventAppend{Source: "identity", Events: []contracts.EventRecord{bad}}); r.status != 400 ||
			!strings.Contains(string(r.body), "revoked authorization") {
			t.Fatalf("%s: %d %s", data, r.status, r.body)
		}
	}
}
