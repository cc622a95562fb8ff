package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"partnerapi.dev/gateway/internal/routes"
	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/contracts"
)

const menuUUID = "55555555-5555-4555-8555-555555555555"

// concrete fills an operation's path template for restaurant rid.
func concrete(op routes.Operation, rid string) string {
	p := strings.ReplaceAll(op.Path, "{restaurantId}", rid)
	for _, name := range []string{"{menuId}", "{menuPublicId}", "{catalogItemId}", "{menuItemPublicId}", "{endpointId}"} {
		p = strings.ReplaceAll(p, name, menuUUID)
	}
	p = strings.ReplaceAll(p, "{deliveryId}", "1042")
	return strings.ReplaceAll(p, "{orderId}", "ord-1")
}

func bodyFor(op routes.Operation) *bytes.Reader {
	if op.Method == http.MethodGet {
		return nil
	}
	return bytes.NewReader([]byte(`{"idempotencyKey":"66666666-6666-4666-8666-666666666666"}`))
}

func do(t *testing.T, g gw, op routes.Operation, path, token string, hdr ...string) response {
	t.Helper()
	if b := bodyFor(op); b != nil {
		return g.do(t, op.Method, path, token, b, hdr...)
	}
	return g.do(t, op.Method, path, token, nil, hdr...)
}

const metadataURL = baseURL + "/.well-known/oauth-protected-resource/v1"

func TestEveryOperationIsProxiedWithItsContext(t *testing.T) {
	e := newEnv(t)
	g := e.start(nil, "")
	tok := e.id.token(t, tokenOpts{})
	for _, op := range g.g.Operations() {
		t.Run(op.ID, func(t *testing.T) {
			r := do(t, g, op, concrete(op, restA)+"?organization_id="+orgA, tok, "X-Request-Id", "req-"+op.ID)
			if r.status != 200 {
				t.Fatalf("status %d body %s", r.status, r.body)
			}
			if got := r.header.Get("RateLimit-Policy"); got != `"partner";q=100000;w=60` {
				t.Errorf("RateLimit-Policy %q", got)
			}
			if !regexp.MustCompile(`^"partner";r=\d+;t=\d+$`).MatchString(r.header.Get("RateLimit")) {
				t.Errorf("RateLimit %q", r.header.Get("RateLimit"))
			}
			if r.header.Get("Deprecation") != "" || r.header.Get("Sunset") != "" {
				t.Errorf("deprecation headers on a non-retiring operation")
			}
			var up *http.Request
			if op.Service == routes.Identity {
				e.id.mu.Lock()
				up = e.id.last
				e.id.mu.Unlock()
			} else {
				up = e.services.last()
			}
			if up.URL.Path != concrete(op, restA) || up.Method != op.Method || up.URL.Query().Get("organization_id") != orgA {
				t.Fatalf("upstream got %s %s", up.Method, up.URL)
			}
			if up.Header.Get("X-Request-Id") != "req-"+op.ID {
				t.Errorf("X-Request-Id upstream %q", up.Header.Get("X-Request-Id"))
			}
			if up.Header.Get("Authorization") != "" {
				t.Errorf("bearer token forwarded to a service")
			}
			ic, err := e.id.keys.Verify(up.Header.Get(internalctx.Header))
			if err != nil {
				t.Fatalf("internal context: %v", err)
			}
			if ic.ClientID != clientID || ic.UserID != userID || ic.GrantID != "g-rest" || ic.RequestID != "req-"+op.ID {
				t.Errorf("context %+v", ic)
			}
			if op.RestaurantScoped {
				if ic.Tenant == nil || ic.Tenant.ID != restA || ic.Tenant.TimeZone != "Europe/Helsinki" || ic.Tenant.DayStartHour != 4 || ic.Tenant.Currency != "EUR" || ic.Tenant.Country != "FI" || ic.OrganizationID != orgA {
					t.Errorf("tenant %+v org %q", ic.Tenant, ic.OrganizationID)
				}
			}
		})
	}
}

func TestTokenFailuresAnswer401WithChallenge(t *testing.T) {
	e := newEnv(t)
	g := e.start(nil, "")
	otherEC, otherRSA := otherKeys(t)
	good := e.id.token(t, tokenOpts{})
	parts := strings.Split(good, ".")
	tampered := parts[0] + "." + parts[1] + "." + strings.Map(func(r rune) rune {
		if r == 'A' {
			return 'B'
		}
		return 'A'
	}, parts[2])
	// Claims changed under the original signature.
	var claims map[string]any
	raw, _ := base64Decode(parts[1])
	_ = json.Unmarshal(raw, &claims)
	claims["scope"] = "svc.restaurant.read svc.orders.read svc.menu.publish.write"
	cb, _ := json.Marshal(claims)
	forged := parts[0] + "." + base64Encode(cb) + "." + parts[2]
	hs, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte("0123456789abcdef0123456789abcdef")}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", e.id.kid))
	_ = hs
	cases := map[string]string{
		"malformed":       "not-a-jwt",
		"three garbage":   "a.b.c",
		"tampered sig":    tampered,
		"forged claims":   forged,
		"alg none":        noneToken(),
		"hs256":           e.id.token(t, tokenOpts{key: []byte("0123456789abcdef0123456789abcdef"), alg: jose.HS256}),
		"wrong key ES256": e.id.token(t, tokenOpts{key: otherEC}),
		"wrong key RS256": e.id.token(t, tokenOpts{key: otherRSA, alg: jose.RS256}),
		"unknown kid":     e.id.token(t, tokenOpts{key: otherEC, kid: "nope"}),
		"wrong audience":  e.id.token(t, tokenOpts{aud: baseURL + "/other"}),
		"wrong issuer":    e.id.token(t, tokenOpts{iss: "https://evil.example"}),
		"wrong typ":       e.id.token(t, tokenOpts{typ: "JWT"}),
		"expired":         e.id.token(t, tokenOpts{exp: time.Now().Add(-time.Minute)}),
		"id token typ":    e.id.token(t, tokenOpts{typ: "id+jwt"}),
	}
	challenge := regexp.MustCompile(`^Bearer error="invalid_token", error_description="[^"]+", resource_metadata="` + regexp.QuoteMeta(metadataURL) + `"$`)
	for _, op := range g.g.Operations() {
		path := concrete(op, restA)
		r := do(t, g, op, path, "")
		if r.status != 401 || r.code() != "invalid_token" || r.header.Get("WWW-Authenticate") != `Bearer resource_metadata="`+metadataURL+`"` {
			t.Errorf("%s no token: %d %s %q", op.ID, r.status, r.body, r.header.Get("WWW-Authenticate"))
		}
		if r.header.Get("RateLimit-Policy") == "" || r.header.Get("X-Request-Id") == "" || r.env["request_id"] != r.header.Get("X-Request-Id") {
			t.Errorf("%s: 401 lacks RateLimit-Policy or request id", op.ID)
		}
		for name, tok := range cases {
			r := do(t, g, op, path, tok)
			if r.status != 401 || r.code() != "invalid_token" || !challenge.MatchString(r.header.Get("WWW-Authenticate")) || r.env["error_description"] == "" {
				t.Errorf("%s %s: %d %s %q", op.ID, name, r.status, r.body, r.header.Get("WWW-Authenticate"))
			}
		}
		r = do(t, g, op, path, "", "Authorization", "Basic dXNlcjpwYXNz")
		if r.status != 401 || !challenge.MatchString(r.header.Get("WWW-Authenticate")) {
			t.Errorf("%s basic auth: %d %q", op.ID, r.status, r.header.Get("WWW-Authenticate"))
		}
	}
	if e.services.count() != 0 {
		t.Fatalf("a service was called for an unauthenticated request")
	}
}

func TestEachMissingScopeAnswers403NamingIt(t *testing.T) {
	e := newEnv(t)
	g := e.start(nil, "")
	for _, op := range g.g.Operations() {
		for _, missing := range op.Scopes {
			// Missing from the token, then missing from the grant.
			for _, where := range []string{"token", "grant"} {
				var rest []string
				for _, s := range allScopes {
					if s != missing {
						rest = append(rest, s)
					}
				}
				tokScopes, grantScopes := allScopes, allScopes
				if where == "token" {
					tokScopes = rest
				} else {
					grantScopes = rest
				}
				gid := "g-" + randomHex(4)
				e.id.setGrant(restaurantGrant(gid, grantScopes...))
				tok := e.id.token(t, tokenOpts{gid: gid, scopes: tokScopes})
				r := do(t, g, op, concrete(op, restA), tok)
				wantChallenge := fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, `, strings.Join(op.Scopes, " "))
				if r.status != 403 || r.code() != "insufficient_scope" || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), wantChallenge) ||
					!strings.Contains(r.header.Get("WWW-Authenticate"), `resource_metadata="`+metadataURL+`"`) {
					t.Errorf("%s without %s in %s: %d %s %q", op.ID, missing, where, r.status, r.body, r.header.Get("WWW-Authenticate"))
					continue
				}
				if d, _ := r.env["error_description"].(string); !strings.Contains(d, missing) {
					t.Errorf("%s: description %q does not name %s", op.ID, d, missing)
				}
			}
		}
	}
}

func TestOrganizationBoundaryNeedsOrganizationRead(t *testing.T) {
	e := newEnv(t)
	g := e.start(nil, "")
	var scopes []string
	for _, s := range allScopes {
		if s != contracts.ScopeOrganizationRead {
			scopes = append(scopes, s)
		}
	}
	e.id.setGrant(orgGrant("g-org1", 1, scopes...))
	tok := e.id.token(t, tokenOpts{gid: "g-org1", scopes: scopes})
	for _, op := range g.g.Operations() {
		r := do(t, g, op, concrete(op, restC), tok)
		if r.status != 403 || !strings.Contains(r.header.Get("WWW-Authenticate"), contracts.ScopeOrganizationRead) {
			t.Errorf("%s: %d %q", op.ID, r.status, r.header.Get("WWW-Authenticate"))
		}
	}
	// A restaurant grant does not need it.
	e.id.setGrant(restaurantGrant("g-r2", scopes...))
	tok = e.id.token(t, tokenOpts{gid: "g-r2", scopes: scopes})
	for _, op := range g.g.Operations() {
		if op.ID == "listOrganizations" {
			continue
		}
		if r := do(t, g, op, concrete(op, restA), tok); r.status != 200 {
			t.Errorf("%s restaurant grant: %d %s", op.ID, r.status, r.body)
		}
	}
}

func base64Decode(s string) ([]byte, error) { return jsonB64.DecodeString(s) }
func base64Encode(b []byte) string          { return jsonB64.EncodeToString(b) }

// sameShape compares two error answers ignoring the request id.
func sameShape(t *testing.T, a, b response) {
	t.Helper()
	strip := func(r response) string {
		m := map[string]any{}
		_ = json.Unmarshal(r.body, &m)
		delete(m, "request_id")
		out, _ := json.Marshal(m)
		return fmt.Sprintf("%d %s %s", r.status, r.header.Get("Content-Type"), out)
	}
	if strip(a) != strip(b) {
		t.Errorf("answers differ:\n%s\n%s", strip(a), strip(b))
	}
	ha, hb := headerNames(a.header), headerNames(b.header)
	if ha != hb {
		t.Errorf("header sets differ:\n%s\n%s", ha, hb)
	}
}

func headerNames(h http.Header) string {
	var names []string
	for k := range h {
		if k != "Date" {
			names = append(names, k)
		}
	}
	sortStrings(names)
	return strings.Join(names, ",")
}

func TestRestaurantsOutsideTheGrantAnswer404LikeUnknownOnes(t *testing.T) {
	e := newEnv(t)
	g := e.start(nil, "")
	tok := e.id.token(t, tokenOpts{})
	for _, op := range g.g.Operations() {
		if !op.RestaurantScoped {
			continue
		}
		other := do(t, g, op, concrete(op, restB), tok)
		unknownR := do(t, g, op, concrete(op, unknown), tok)
		badUUID := do(t, g, op, concrete(op, "not-a-uuid"), tok)
		if other.status != 404 || other.code() != "not_found" {
			t.Errorf("%s other restaurant: %d %s", op.ID, other.status, other.body)
		}
		sameShape(t, other, unknownR)
		sameShape(t, other, badUUID)
		if strings.Contains(op.Path, "{menu") {
			bad := do(t, g, op, strings.ReplaceAll(concrete(op, restA), menuUUID, "123"), tok)
			sameShape(t, other, bad)
		}
	}
	// Unknown paths are refused before authentication (so carry no RateLimit
	// header) with the same status and body.
	unknownPath := g.do(t, "GET", "/v1/restaurants/"+restA+"/nothing-here", tok, nil)
	outside := do(t, g, routes.Table("A")[2], concrete(routes.Table("A")[2], restB), tok)
	unknownPath.header, outside.header = nil, nil
	sameShape(t, unknownPath, outside)
	if e.services.count() != 0 {
		t.Fatalf("a service was called for a restaurant outside the grant")
	}
}

func TestOrganizationIDRules(t *testing.T) {
	e := newEnv(t)
	g := e.start(nil, "")
	e.id.setGrant(orgGrant("g-one", 1))
	e.id.setGrant(orgGrant("g-two", 2))
	one := e.id.token(t, tokenOpts{gid: "g-one"})
	two := e.id.token(t, tokenOpts{gid: "g-two"})
	rest := e.id.token(t, tokenOpts{})
	report := func(rid, org string) string {
		p := "/v1/restaurants/" + rid + "/payment-report?start_date=2026-01-01&end_date=2026-01-01&scope=day"
		if org != "" {
			p += "&organization_id=" + org
		}
		return p
	}
	cases := []struct {
		name, tok, path string
		status          int
		org             string
	}{
		{"restaurant grant, omitted", rest, report(restA, ""), 200, ""},
		{"restaurant grant, its organization", rest, report(restA, orgA), 200, orgA},
		{"restaurant grant, other organization", rest, report(restA, org1), 404, ""},
		{"restaurant grant, malformed organization", rest, report(restA, "xyz"), 400, ""},
		{"one-organization grant, omitted", one, report(restC, ""), 200, org1},
		{"one-organization grant, given", one, report(restC, org1), 200, org1},
		{"one-organization grant, wrong organization", one, report(restC, org2), 404, ""},
		{"two-organization grant, omitted", two, report(restC, ""), 400, ""},
		{"two-organization grant, right organization", two, report(restD, org2), 200, org2},
		{"two-organization grant, restaurant of the other organization", two, report(restD, org1), 404, ""},
		{"two-organization grant, organization outside the grant", two, report(restC, orgA), 404, ""},
		{"two-organization grant, restaurant outside the grant", two, report(restA, org1), 404, ""},
		{"list restaurants ignores it", two, "/v1/restaurants", 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := e.services.count()
			r := g.do(t, "GET", c.path, c.tok, nil)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			if c.status == 400 && (r.code() != "invalid_request" || !strings.Contains(r.env["message"].(string), "organization_id")) {
				t.Errorf("400 body %s", r.body)
			}
			if c.status == 200 && strings.Contains(c.path, "payment-report") {
				if e.services.count() != before+1 {
					t.Fatal("not proxied")
				}
				ic, _ := e.id.keys.Verify(e.services.last().Header.Get(internalctx.Header))
				if ic.OrganizationID != c.org {
					t.Errorf("organization in context %q, want %q", ic.OrganizationID, c.org)
				}
			}
		})
	}
}

func TestRevokedExpiredAndSuspendedGrantsAnswer403(t *testing.T) {
	e := newEnv(t)
	e.vars["GRANT_CACHE_TTL"] = "300ms"
	g := e.start(nil, "")
	gr := restaurantGrant("g-rev")
	e.id.setGrant(gr)
	tok := e.id.token(t, tokenOpts{gid: "g-rev"})
	path := "/v1/restaurants/" + restA + "/orders"
	if r := g.do(t, "GET", path, tok, nil); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	calls := e.id.callCount("/internal/v1/grants/g-rev")
	for range 5 {
		g.do(t, "GET", path, tok, nil)
	}
	if got := e.id.callCount("/internal/v1/grants/g-rev"); got != calls {
		t.Errorf("grant fetched %d more times within the cache lifetime", got-calls)
	}
	for _, mutate := range []func(*contracts.Grant){
		func(g *contracts.Grant) { g.Status = "revoked" },
		func(g *contracts.Grant) { g.Status = "expired" },
		func(g *contracts.Grant) { g.ExpiresAt = time.Now().Add(-time.Second) },
		func(g *contracts.Grant) { g.ClientStatus = "suspended" },
	} {
		ng := *restaurantGrant("g-rev")
		mutate(&ng)
		e.id.setGrant(&ng)
		deadline := time.Now().Add(2 * time.Second)
		var r response
		for time.Now().Before(deadline) {
			if r = g.do(t, "GET", path, tok, nil); r.status == 403 {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if r.status != 403 || r.code() != "insufficient_scope" || !strings.Contains(r.env["error_description"].(string), "expired or was revoked") ||
			!strings.HasPrefix(r.header.Get("WWW-Authenticate"), `Bearer error="insufficient_scope"`) {
			t.Errorf("%d %s %q", r.status, r.body, r.header.Get("WWW-Authenticate"))
		}
		e.id.setGrant(restaurantGrant("g-rev"))
		time.Sleep(350 * time.Millisecond)
	}
	// A grant identity does not know.
	tok = e.id.token(t, tokenOpts{gid: "g-missing"})
	if r := g.do(t, "GET", path, tok, nil); r.status != 403 || !strings.Contains(r.env["error_description"].(string), "revoked") {
		t.Errorf("unknown grant: %d %s", r.status, r.body)
	}
	// A token whose subject is not the grant's user.
	tok = e.id.token(t, tokenOpts{sub: "someone-else"})
	if r := g.do(t, "GET", path, tok, nil); r.status != 401 {
		t.Errorf("mismatched subject: %d %s", r.status, r.body)
	}
}

func TestUnconfiguredAndUnreachableUpstreamsAnswer503(t *testing.T) {
	e := newEnv(t)
	e.vars["ORDERS_URL"] = ""
	e.vars["CATALOG_IMPORT_URL"] = ""
	e.vars["MENUS_URL"] = "http://127.0.0.1:1" // nothing listens
	g := e.start(nil, "")
	tok := e.id.token(t, tokenOpts{})
	for _, op := range g.g.Operations() {
		if op.Service != routes.Orders && op.Service != routes.CatalogImport && op.Service != routes.Menus {
			continue
		}
		r := do(t, g, op, concrete(op, restA), tok)
		want := "service_unavailable"
		if op.Write {
			want = "capability_disabled"
		}
		if r.status != 503 || r.code() != want || r.header.Get("X-Request-Id") == "" || r.header.Get("RateLimit-Policy") == "" {
			t.Errorf("%s: %d %s", op.ID, r.status, r.body)
		}
	}
	// Outside the grant is still 404, not 503.
	op := routes.Table("A")[9]
	if r := do(t, g, op, concrete(op, restB), tok); r.status != 404 {
		t.Errorf("unconfigured upstream leaked: %d", r.status)
	}
}

func TestUpstreamTimeoutAnswers503(t *testing.T) {
	e := newEnv(t)
	slow := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { time.Sleep(700 * time.Millisecond) })
	e.vars["ORDERS_URL"] = slow.srv.URL
	e.vars["MENUS_URL"] = slow.srv.URL
	e.vars["UPSTREAM_TIMEOUT"] = "200ms"
	g := e.start(nil, "")
	tok := e.id.token(t, tokenOpts{})
	if r := g.do(t, "GET", "/v1/restaurants/"+restA+"/orders", tok, nil); r.status != 503 || r.code() != "service_unavailable" {
		t.Errorf("read: %d %s", r.status, r.body)
	}
	if r := g.do(t, "POST", "/v1/restaurants/"+restA+"/menus", tok, strings.NewReader(`{}`)); r.status != 503 || r.code() != "capability_disabled" {
		t.Errorf("write: %d %s", r.status, r.body)
	}
	time.Sleep(600 * time.Millisecond)
	if n := slow.count(); n != 2 {
		t.Errorf("upstream saw %d requests; writes must not be retried", n)
	}
}

// The events feed holds a long poll up to 30 s on purpose: its upstream
// waits that long beyond UPSTREAM_TIMEOUT, other services do not.
func TestEventsLongPollOutlastsTheUpstreamTimeout(t *testing.T) {
	e := newEnv(t)
	slow := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(700 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"data":{"events":[],"nextAfter":0,"hasMore":false,"headSeq":0,"oldestSeq":1}}`))
	})
	e.vars["EVENTS_URL"] = slow.srv.URL
	e.vars["UPSTREAM_TIMEOUT"] = "200ms"
	g := e.start(nil, "")
	tok := e.id.token(t, tokenOpts{})
	if r := g.do(t, "GET", "/v1/restaurants/"+restA+"/events?wait=1", tok, nil); r.status != 200 {
		t.Errorf("long poll: %d %s", r.status, r.body)
	}
}

func TestUpstreamAnswersPassThrough(t *testing.T) {
	e := newEnv(t)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Location", "/v1/restaurants/x/menus/y")
		w.Header().Set("Set-Cookie", "leak=1")
		w.Header().Set("X-Request-Id", "forged")
		w.Header().Set("RateLimit-Policy", "forged")
		w.WriteHeader(409)
		_, _ = w.Write([]byte(`{"error":"conflict","request_id":"r","message":"stale"}`))
	})
	e.vars["MENUS_URL"] = up.srv.URL
	g := e.start(nil, "")
	tok := e.id.token(t, tokenOpts{})
	body := `{"name":"Lunch","idempotencyKey":"66666666-6666-4666-8666-666666666666"}`
	r := g.do(t, "POST", "/v1/restaurants/"+restA+"/menus?x=1", tok, strings.NewReader(body), "X-Request-Id", "abc.123")
	if r.status != 409 || string(r.body) != `{"error":"conflict","request_id":"r","message":"stale"}` {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if r.header.Get("Content-Type") != "application/json; charset=utf-8" || r.header.Get("Location") != "/v1/restaurants/x/menus/y" {
		t.Errorf("headers %v", r.header)
	}
	if r.header.Get("Set-Cookie") != "" || r.header.Get("X-Request-Id") != "abc.123" || r.header.Get("RateLimit-Policy") != `"partner";q=100000;w=60` {
		t.Errorf("gateway-owned headers taken from upstream: %v", r.header)
	}
	if string(up.body[0]) != body || up.reqs[0].Header.Get("Content-Type") != "application/json" || up.reqs[0].URL.RawQuery != "x=1" {
		t.Errorf("upstream got %q %v", up.body[0], up.reqs[0].Header)
	}
}

func TestSpoofedHeadersAreStripped(t *testing.T) {
	e := newEnv(t)
	g := e.start(nil, "")
	tok := e.id.token(t, tokenOpts{})
	forged := e.id.keys.Sign(internalctx.Context{ClientID: "evil", UserID: "evil", Scopes: allScopes})
	r := g.do(t, "GET", "/v1/restaurants/"+restA+"/orders", tok, nil,
		internalctx.Header, forged, "X-Forwarded-For", "6.6.6.6", "Forwarded", "for=6.6.6.6", "X-Forwarded-Host", "evil", "X-Real-Ip", "6.6.6.6")
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	up := e.services.last()
	ic, err := e.id.keys.Verify(up.Header.Get(internalctx.Header))
	if err != nil || ic.ClientID != clientID || len(up.Header.Values(internalctx.Header)) != 1 {
		t.Errorf("internal context %+v %v", ic, err)
	}
	for _, h := range []string{"X-Forwarded-For", "Forwarded", "X-Forwarded-Host", "X-Real-Ip"} {
		if up.Header.Get(h) != "" {
			t.Errorf("%s reached the service", h)
		}
	}
	// Without a token the forged context gets nothing either.
	if r := g.do(t, "GET", "/v1/restaurants/"+restA+"/orders", "", nil, internalctx.Header, forged); r.status != 401 {
		t.Errorf("forged context without token: %d", r.status)
	}
	// The OAuth surface does not see it; X-Forwarded-For is the real peer.
	r = g.do(t, "GET", "/oauth2/authorize?client_id=c", "", nil, internalctx.Header, forged, "X-Forwarded-For", "6.6.6.6")
	if r.env["ic"] != "" || r.env["xff"] == "6.6.6.6" {
		t.Errorf("OAuth proxy got %s", r.body)
	}
}

func TestOAuthSurfaceIsProxiedWithoutBearerAuth(t *testing.T) {
	e := newEnv(t)
	g := e.start(nil, "")
	r := g.do(t, "POST", "/oauth2/authorize", "", strings.NewReader("state=xyz"), "Content-Type", "application/x-www-form-urlencoded", "Cookie", "csrf=1")
	if r.status != 302 || r.header.Get("Location") != "https://partner.example/cb?code=abc&state=state=xyz" {
		t.Fatalf("%d %v %s", r.status, r.header, r.body)
	}
	if !strings.Contains(r.header.Get("Set-Cookie"), "session=s1") {
		t.Errorf("Set-Cookie %q", r.header.Get("Set-Cookie"))
	}
	if r.header.Get("RateLimit-Policy") == "" || r.header.Get("X-Request-Id") == "" {
		t.Errorf("edge headers missing: %v", r.header)
	}
	r = g.do(t, "POST", "/oauth2/token", "", strings.NewReader("grant_type=authorization_code"), "Content-Type", "application/x-www-form-urlencoded", "Authorization", "Basic Y2xpZW50OnNlY3JldA==", "Cookie", "a=b")
	if r.status != 200 || r.env["auth"] != "Basic Y2xpZW50OnNlY3JldA==" || r.env["cookie"] != "a=b" {
		t.Errorf("token: %d %s", r.status, r.body)
	}
	for _, p := range []string{"GET /oauth2/jwks", "GET /.well-known/oauth-authorization-server", "POST /oauth2/revoke", "POST /oauth2/introspect"} {
		method, path, _ := strings.Cut(p, " ")
		if r := g.do(t, method, path, "", nil); r.status != 200 {
			t.Errorf("%s: %d", p, r.status)
		}
	}
	r = g.do(t, "GET", "/.well-known/oauth-protected-resource", "", nil)
	var md map[string]any
	_ = json.Unmarshal(r.body, &md)
	if r.status != 200 || md["resource"] != audience || fmt.Sprint(md["authorization_servers"]) != "["+baseURL+"]" ||
		fmt.Sprint(md["bearer_methods_supported"]) != "[header]" || len(md["scopes_supported"].([]any)) != 11 {
		t.Errorf("metadata %s", r.body)
	}
	if r := g.do(t, "GET", "/v1/openapi.json", "", nil); r.status != 200 || r.env["openapi"] != "3.1.0" {
		t.Errorf("openapi: %d", r.status)
	}
}

// TestAccountPagesAreProxied: identity's connected-apps pages are reached
// through the gateway like the sign-in pages (cookies both ways, no bearer
// check), and no other path under /account is.
func TestAccountPagesAreProxied(t *testing.T) {
	e := newEnv(t)
	g := e.start(nil, "")
	const grant = "/account/authorizations/44444444-4444-4444-8444-444444444444"
	for _, p := range []string{"GET /account", "POST /account/sign-in", "POST /account/sign-out", "GET " + grant, "POST " + grant + "/revoke", "POST " + grant + "/approve-new"} {
		method, path, _ := strings.Cut(p, " ")
		r := g.do(t, method, path, "", strings.NewReader("csrf_token=x"), "Content-Type", "application/x-www-form-urlencoded", "Cookie", "identity_session=s")
		if r.status != 200 || r.env["path"] != path || r.env["cookie"] != "identity_session=s" || r.env["ic"] != "" {
			t.Errorf("%s: %d %s", p, r.status, r.body)
		}
	}
	for _, p := range []string{"GET /account/", "GET /account/other", "POST /account", "GET " + grant + "/revoke", "GET " + grant + "/approve-new", "DELETE " + grant} {
		method, path, _ := strings.Cut(p, " ")
		if r := g.do(t, method, path, "", nil); r.status != 404 && r.status != 405 {
			t.Errorf("%s reached identity: %d %s", p, r.status, r.body)
		}
	}
}

func TestIdentityDownAnswers503(t *testing.T) {
	e := newEnv(t)
	g := e.start(nil, "")
	tok := e.id.token(t, tokenOpts{})
	if r := g.do(t, "GET", "/v1/restaurants/"+restA+"/orders", tok, nil); r.status != 200 {
		t.Fatalf("%d", r.status)
	}
	e.id.srv.Close()
	if r := g.do(t, "GET", "/v1/restaurants/"+restA+"/orders", tok, nil); r.status != 503 || r.code() != "service_unavailable" {
		t.Errorf("read: %d %s", r.status, r.body)
	}
	if r := g.do(t, "POST", "/v1/restaurants/"+restA+"/menus", tok, strings.NewReader("{}")); r.status != 503 || r.code() != "capability_disabled" {
		t.Errorf("write: %d %s", r.status, r.body)
	}
	if r := g.do(t, "GET", "/oauth2/jwks", "", nil); r.status != 503 {
		t.Errorf("oauth: %d", r.status)
	}
	if r := g.do(t, "GET", "/readyz", "", nil); r.status != 503 {
		t.Errorf("readyz: %d", r.status)
	}
}

func TestEdgeRules(t *testing.T) {
	e := newEnv(t)
	g := e.start(nil, "")
	tok := e.id.token(t, tokenOpts{})

	t.Run("body over 1 MiB is 413 before parsing", func(t *testing.T) {
		r := g.oversized(t, "POST", "/v1/restaurants/"+restA+"/menus", tok, "X-Request-Id", "big-1")
		if r.status != 413 || r.code() != "payload_too_large" || r.header.Get("X-Request-Id") != "big-1" || r.env["request_id"] != "big-1" ||
			r.header.Get("RateLimit-Policy") != `"partner";q=100000;w=60` {
			t.Errorf("%d %v %s", r.status, r.header, r.body)
		}
		if e.services.count() != 0 {
			t.Error("oversized body reached a service")
		}
		ok := g.http(t, "POST", "/v1/restaurants/"+restA+"/menus", tok, bytes.NewReader(bytes.Repeat([]byte(" "), 1<<20)))
		if ok.status != 200 {
			t.Errorf("exactly 1 MiB: %d", ok.status)
		}
	})
	t.Run("request id kept or replaced", func(t *testing.T) {
		for in, keep := range map[string]bool{"abc-DEF_1.2:3": true, "bad id!": false, strings.Repeat("x", 129): false, "": false} {
			r := g.do(t, "GET", "/v1/nothing", "", nil, "X-Request-Id", in)
			got := r.header.Get("X-Request-Id")
			if keep && got != in || !keep && (got == in || got == "") || r.env["request_id"] != got {
				t.Errorf("in %q out %q body %s", in, got, r.body)
			}
		}
	})
	t.Run("unknown path and method", func(t *testing.T) {
		r := g.do(t, "GET", "/v1/unknown", tok, nil)
		if r.status != 404 || r.code() != "not_found" || r.header.Get("RateLimit-Policy") == "" {
			t.Errorf("404: %d %v", r.status, r.header)
		}
		r = g.do(t, "DELETE", "/v1/restaurants/"+restA+"/menus", tok, nil)
		if r.status != 405 || r.header.Get("Allow") != "GET, HEAD, POST" || r.header.Get("RateLimit-Policy") == "" {
			t.Errorf("405: %d %v", r.status, r.header)
		}
	})
	t.Run("naming set A serves /menus/pos only", func(t *testing.T) {
		if r := g.do(t, "PUT", "/v1/restaurants/"+restA+"/menus/active", tok, strings.NewReader("{}")); r.status != 404 {
			t.Errorf("/menus/active under set A: %d", r.status)
		}
	})
	t.Run("health", func(t *testing.T) {
		if r := g.do(t, "GET", "/healthz", "", nil); r.status != 200 {
			t.Errorf("healthz %d", r.status)
		}
		if r := g.do(t, "GET", "/readyz", "", nil); r.status != 200 {
			t.Errorf("readyz %d %s", r.status, r.body)
		}
	})
}

func TestNamingSetB(t *testing.T) {
	e := newEnv(t)
	e.vars["MENU_NAMING_SET"] = "B"
	g := e.start(nil, "")
	tok := e.id.token(t, tokenOpts{})
	if r := g.do(t, "PUT", "/v1/restaurants/"+restA+"/menus/active", tok, strings.NewReader("{}")); r.status != 200 {
		t.Errorf("/menus/active: %d %s", r.status, r.body)
	}
	if r := g.do(t, "PUT", "/v1/restaurants/"+restA+"/menus/pos", tok, strings.NewReader("{}")); r.status != 404 {
		t.Errorf("/menus/pos under set B: %d", r.status)
	}
	if r := g.do(t, "GET", "/v1/restaurants/"+restA+"/menus/"+menuUUID+"/items/"+menuUUID, tok, nil); r.status != 200 {
		t.Errorf("item: %d", r.status)
	}
	if r := g.do(t, "GET", "/v1/openapi.json", "", nil); r.status != 200 || !bytes.Equal(r.body, apispec.NamingSetB()) {
		t.Errorf("openapi.json under set B: %d, set-B document: %v", r.status, bytes.Equal(r.body, apispec.NamingSetB()))
	}
}

func TestDeprecationHeadersOnlyWhereConfigured(t *testing.T) {
	e := newEnv(t)
	e.vars["DEPRECATED_OPERATIONS"] = `{"searchOrders":{"deprecation":"2026-01-01T00:00:00Z","sunset":"2027-01-01T00:00:00Z","link":"https://developer.example/notices/orders-v2"}}`
	g := e.start(nil, "")
	tok := e.id.token(t, tokenOpts{})
	for _, token := range []string{tok, ""} {
		r := g.do(t, "GET", "/v1/restaurants/"+restA+"/orders", token, nil)
		if r.header.Get("Deprecation") != "@1767225600" || r.header.Get("Sunset") != "Fri, 01 Jan 2027 00:00:00 GMT" ||
			r.header.Get("Link") != `<https://developer.example/notices/orders-v2>; rel="deprecation"` {
			t.Errorf("status %d headers %v", r.status, r.header)
		}
	}
	r := g.do(t, "GET", "/v1/restaurants/"+restA+"/orders/o1", tok, nil)
	if r.header.Get("Deprecation") != "" || r.header.Get("Sunset") != "" || r.header.Get("Link") != "" {
		t.Errorf("deprecation headers on another operation: %v", r.header)
	}
}

func TestTokenAndGrantCachesAvoidRepeatedWork(t *testing.T) {
	e := newEnv(t)
	e.vars["GRANT_CACHE_TTL"] = "5s"
	g := e.start(nil, "")
	tok := e.id.token(t, tokenOpts{})
	for range 20 {
		if r := g.do(t, "GET", "/v1/restaurants/"+restA+"/orders", tok, nil); r.status != 200 {
			t.Fatal(r.status)
		}
	}
	if n := e.id.callCount("/oauth2/jwks"); n != 1 {
		t.Errorf("JWKS fetched %d times", n)
	}
	if n := e.id.callCount("/internal/v1/grants/g-rest"); n != 1 {
		t.Errorf("grant fetched %d times", n)
	}
	// Unknown kids do not hammer identity.
	other, _ := otherKeys(t)
	for i := range 10 {
		g.do(t, "GET", "/v1/restaurants/"+restA+"/orders", e.id.token(t, tokenOpts{key: other, kid: fmt.Sprint("k", i)}), nil)
	}
	if n := e.id.callCount("/oauth2/jwks"); n > 2 {
		t.Errorf("JWKS fetched %d times for unknown kids", n)
	}
	_ = context.Background()
}

func TestAmbiguousPathsAndRepeatedOrganizationID(t *testing.T) {
	e := newEnv(t)
	g := e.start(nil, "")
	tok := e.id.token(t, tokenOpts{})
	for _, p := range []string{
		"/v1/restaurants/" + restA + "/orders/..%2F..%2F" + restB + "%2Forders",
		"/v1/restaurants/" + restA + "/orders/%2e%2e",
		"/v1/restaurants/" + restA + "/orders/..",
	} {
		if r := g.do(t, "GET", p, tok, nil); r.status != 404 {
			t.Errorf("%s: %d", p, r.status)
		}
	}
	if e.services.count() != 0 {
		t.Error("an ambiguous path reached a service")
	}
	r := g.do(t, "GET", "/v1/restaurants/"+restA+"/orders?organization_id="+orgA+"&organization_id="+org1, tok, nil)
	if r.status != 400 {
		t.Errorf("repeated organization_id: %d", r.status)
	}
	if r := g.do(t, "HEAD", "/v1/restaurants/"+restA+"/orders", tok, nil); r.status != 200 {
		t.Errorf("HEAD: %d", r.status)
	}
}

func TestOrganizationIDRulesOnEveryRestaurantOperation(t *testing.T) {
	e := newEnv(t)
	g := e.start(nil, "")
	e.id.setGrant(orgGrant("g-two", 2))
	two := e.id.token(t, tokenOpts{gid: "g-two"})
	for _, op := range g.g.Operations() {
		if !op.RestaurantScoped {
			continue
		}
		if r := do(t, g, op, concrete(op, restC), two); r.status != 400 || r.code() != "invalid_request" {
			t.Errorf("%s without organization_id: %d %s", op.ID, r.status, r.body)
		}
		if r := do(t, g, op, concrete(op, restC)+"?organization_id="+org2, two); r.status != 404 {
			t.Errorf("%s with the other organization: %d", op.ID, r.status)
		}
		if r := do(t, g, op, concrete(op, restC)+"?organization_id="+org1, two); r.status != 200 {
			t.Errorf("%s with its organization: %d %s", op.ID, r.status, r.body)
		}
	}
}

func TestCompressedRequestBodiesAreRefused(t *testing.T) {
	e := newEnv(t)
	g := e.start(nil, "")
	r := g.do(t, "POST", "/v1/restaurants/"+restA+"/menus", e.id.token(t, tokenOpts{}), strings.NewReader("x"), "Content-Encoding", "gzip")
	if r.status != 415 || e.services.count() != 0 {
		t.Errorf("%d %s", r.status, r.body)
	}
}
