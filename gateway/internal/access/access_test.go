package access_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/gateway/internal/access"
	"partnerapi.dev/gateway/internal/auth"
	"partnerapi.dev/gateway/internal/grants"
	"partnerapi.dev/gateway/internal/routes"
	"partnerapi.dev/services/contracts"
)

const (
	restA = "11111111-1111-4111-8111-111111111111"
	restB = "22222222-2222-4222-8222-222222222222"
	orgA  = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	orgB  = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
)

var now = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// grant decodes a grant as identity sends it, with changes applied.
func grant(t *testing.T, change func(map[string]any)) *grants.Grant {
	t.Helper()
	g := map[string]any{
		"grantId": "g1", "clientId": "c1", "clientStatus": "approved", "userId": "u1", "status": "active",
		"expiresAt": now.Add(time.Hour), "scopes": contracts.ScopeNames(), "boundary": "restaurant",
		"restaurants": []map[string]any{{"restaurantId": restA, "timeZone": "Europe/Helsinki", "dayStartHour": 4,
			"currency": "EUR", "country": "FI", "organizationIds": []string{orgA}}},
		"revokedTokenFamilies": []string{"fam-revoked"}, "revokedTokenIds": []string{"jti-revoked"},
	}
	if change != nil {
		change(g)
	}
	raw, _ := json.Marshal(g)
	var out grants.Grant
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

func orgGrant(orgs int) func(map[string]any) {
	return func(g map[string]any) {
		g["boundary"] = "organization"
		o := []map[string]any{{"organizationId": orgA, "restaurantIds": []string{restA}}}
		if orgs > 1 {
			o = append(o, map[string]any{"organizationId": orgB, "restaurantIds": []string{restB}})
			g["restaurants"] = append(g["restaurants"].([]map[string]any), map[string]any{"restaurantId": restB, "timeZone": "Europe/Oslo",
				"currency": "NOK", "country": "NO", "organizationIds": []string{orgB}})
		}
		g["organizations"] = o
	}
}

func operation(id string) routes.Operation {
	for _, op := range routes.Table(routes.NamingA) {
		if op.ID == id {
			return op
		}
	}
	panic("no operation " + id)
}

func token(scopes ...string) *auth.Token {
	if scopes == nil {
		scopes = contracts.ScopeNames()
	}
	return &auth.Token{Subject: "u1", ClientID: "c1", GrantID: "g1", Scopes: scopes, ID: "jti-1", Family: "fam-1"}
}

func params(kv ...string) func(string) string {
	return func(name string) string {
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == name {
				return kv[i+1]
			}
		}
		return ""
	}
}

func TestDecide(t *testing.T) {
	search := operation("searchOrders")
	details := operation("getOrder")
	cases := []struct {
		name      string
		op        routes.Operation
		tok       *auth.Token
		grant     func(map[string]any)
		params    func(string) string
		orgs      []string
		kind      access.Kind
		scopes    string // InsufficientScope: the scopes named
		describes string
		org       string // allowed: the organization forwarded
	}{
		{name: "allowed", op: search, params: params("restaurantId", restA)},
		{name: "restaurant id in upper case", op: search, params: params("restaurantId", strings.ToUpper(restA))},
		{name: "organization of the restaurant", op: search, params: params("restaurantId", restA), orgs: []string{orgA}, org: orgA},
		{name: "another client's grant", op: search, tok: &auth.Token{Subject: "u1", ClientID: "c2", GrantID: "g1", Scopes: contracts.ScopeNames()},
			params: params("restaurantId", restA), kind: access.InvalidToken, describes: "does not match"},
		{name: "revoked family", op: search, tok: &auth.Token{Subject: "u1", ClientID: "c1", GrantID: "g1", Scopes: contracts.ScopeNames(), Family: "fam-revoked"},
			params: params("restaurantId", restA), kind: access.InvalidToken, describes: "revoked"},
		{name: "revoked token", op: search, tok: &auth.Token{Subject: "u1", ClientID: "c1", GrantID: "g1", Scopes: contracts.ScopeNames(), ID: "jti-revoked"},
			params: params("restaurantId", restA), kind: access.InvalidToken, describes: "revoked"},
		{name: "grant revoked", op: search, grant: func(g map[string]any) { g["status"] = "revoked" }, params: params("restaurantId", restA),
			kind: access.InsufficientScope, scopes: "svc.restaurant.read svc.orders.read", describes: "approve the integration again"},
		{name: "grant expired", op: search, grant: func(g map[string]any) { g["expiresAt"] = now.Add(-time.Second) }, params: params("restaurantId", restA),
			kind: access.InsufficientScope, describes: "expired"},
		{name: "client suspended", op: search, grant: func(g map[string]any) { g["clientStatus"] = "suspended" }, params: params("restaurantId", restA),
			kind: access.InsufficientScope, describes: "revoked"},
		{name: "scope not in the token", op: search, tok: token("svc.restaurant.read"), params: params("restaurantId", restA),
			kind: access.InsufficientScope, scopes: "svc.restaurant.read svc.orders.read", describes: "svc.orders.read"},
		{name: "scope not in the grant", op: search, grant: func(g map[string]any) { g["scopes"] = []string{"svc.restaurant.read"} },
			params: params("restaurantId", restA), kind: access.InsufficientScope, describes: "svc.orders.read"},
		{name: "restaurant outside the grant", op: search, params: params("restaurantId", restB), kind: access.NotFound},
		{name: "restaurant not a UUID", op: search, params: params("restaurantId", "nope"), kind: access.NotFound},
		{name: "order id of 255 characters", op: details, params: params("restaurantId", restA, "orderId", strings.Repeat("€", 255))},
		{name: "order id of 256 characters", op: details, params: params("restaurantId", restA, "orderId", strings.Repeat("o", 256)),
			kind: access.Invalid, describes: "orderId must be at most 255"},
		{name: "organization_id twice", op: search, params: params("restaurantId", restA), orgs: []string{orgA, orgA}, kind: access.Invalid, describes: "at most once"},
		{name: "organization_id not a UUID", op: search, params: params("restaurantId", restA), orgs: []string{"x"}, kind: access.Invalid, describes: "UUID"},
		{name: "another organization", op: search, params: params("restaurantId", restA), orgs: []string{orgB}, kind: access.NotFound},
		{name: "organization grant: its one organization implied", op: search, grant: orgGrant(1), params: params("restaurantId", restA), org: orgA},
		{name: "organization grant needs organization read", op: search, grant: orgGrant(1), tok: token("svc.restaurant.read", "svc.orders.read"),
			params: params("restaurantId", restA), kind: access.InsufficientScope, scopes: "svc.restaurant.read svc.orders.read svc.organization.read"},
		{name: "organization grant of two: organization_id required", op: search, grant: orgGrant(2), params: params("restaurantId", restB),
			kind: access.Invalid, describes: "organization_id is required"},
		{name: "organization grant of two: the right one", op: search, grant: orgGrant(2), params: params("restaurantId", restB), orgs: []string{orgB}, org: orgB},
		{name: "organization grant of two: the wrong one", op: search, grant: orgGrant(2), params: params("restaurantId", restB), orgs: []string{orgA}, kind: access.NotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tok := tc.tok
			if tok == nil {
				tok = token()
			}
			ic, err := access.Decide(access.Request{Operation: tc.op, Token: tok, Grant: grant(t, tc.grant), Now: now, Param: tc.params, OrganizationIDs: tc.orgs})
			if tc.kind == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if ic.Tenant == nil || !strings.EqualFold(ic.Tenant.ID, tc.params("restaurantId")) || ic.OrganizationID != tc.org || ic.GrantID != "g1" || len(ic.Scopes) == 0 {
					t.Fatalf("context %+v tenant %+v", ic, ic.Tenant)
				}
				return
			}
			var r *access.Refusal
			if !errors.As(err, &r) || r.Kind != tc.kind || !strings.Contains(r.Description, tc.describes) || tc.scopes != "" && strings.Join(r.Scopes, " ") != tc.scopes {
				t.Fatalf("got %#v, want kind %d naming %q and scopes %q", err, tc.kind, tc.describes, tc.scopes)
			}
		})
	}
}

func TestEffectiveScopesAreThoseTheGrantStillHolds(t *testing.T) {
	g := grant(t, func(g map[string]any) { g["scopes"] = []string{"svc.restaurant.read", "svc.orders.read"} })
	ic, err := access.Decide(access.Request{Operation: operation("searchOrders"), Token: token(), Grant: g, Now: now, Param: params("restaurantId", restA)})
	if err != nil || strings.Join(ic.Scopes, " ") != "svc.restaurant.read svc.orders.read" {
		t.Fatalf("%v %v", ic.Scopes, err)
	}
}
