package server_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"

	"partnerapi.dev/gateway/internal/config"
	"partnerapi.dev/gateway/internal/server"
	pkgconfig "partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/contracts"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	baseURL   = "https://api.example.test"
	audience  = baseURL + "/v1"
	keySecret = "MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=" // 32 bytes
	clientID  = "client-1"
	userID    = "user-1"

	restA   = "11111111-1111-4111-8111-111111111111" // in the restaurant grant
	restB   = "22222222-2222-4222-8222-222222222222" // another owner's restaurant
	restC   = "33333333-3333-4333-8333-333333333333" // org 1
	restD   = "44444444-4444-4444-8444-444444444444" // org 2
	orgA    = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa" // restA's organization
	org1    = "b1111111-1111-4111-8111-111111111111"
	org2    = "b2222222-2222-4222-8222-222222222222"
	unknown = "99999999-9999-4999-8999-999999999999"
)

var allScopes = []string{"svc.restaurant.read", "svc.organization.read", "svc.orders.read", "svc.accounting.read",
	"svc.analytics.read", "svc.accounting.corrections.write", "svc.menu.read", "svc.menu.structure.write",
	"svc.menu.publish.write", "svc.catalog.import.write", "svc.webhooks.manage"}

// identity stands in for the identity service: JWKS from a test key and
// grants from a map, exactly as its contract says.
type identity struct {
	t      testing.TB
	srv    *httptest.Server
	key    *ecdsa.PrivateKey
	kid    string
	keys   *internalctx.Keyring
	mu     sync.Mutex
	grants map[string]*contracts.Grant
	calls  map[string]int
	last   *http.Request
	// uses is the record of use the gateway sent, by grant; down refuses
	// it with 503.
	uses map[string]time.Time
	down bool
}

func newIdentity(t testing.TB) *identity {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := internalctx.ParseKeys("k1:" + keySecret)
	if err != nil {
		t.Fatal(err)
	}
	id := &identity{t: t, key: key, kid: "es-1", keys: keys, grants: map[string]*contracts.Grant{}, calls: map[string]int{}, uses: map[string]time.Time{}}
	id.srv = httptest.NewServer(http.HandlerFunc(id.serve))
	t.Cleanup(id.srv.Close)
	return id
}

func (id *identity) serve(w http.ResponseWriter, r *http.Request) {
	id.mu.Lock()
	id.calls[r.URL.Path]++
	id.last = r.Clone(context.Background())
	id.mu.Unlock()
	switch {
	case r.URL.Path == "/oauth2/jwks":
		set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &id.key.PublicKey, KeyID: id.kid, Algorithm: "ES256", Use: "sig"}}}
		_ = json.NewEncoder(w).Encode(set)
	case r.URL.Path == contracts.GrantUsePath && r.Method == http.MethodPost:
		var in contracts.GrantUses
		if _, err := id.keys.Verify(r.Header.Get(internalctx.Header)); err != nil || json.NewDecoder(r.Body).Decode(&in) != nil {
			w.WriteHeader(401)
			return
		}
		id.mu.Lock()
		defer id.mu.Unlock()
		if id.down {
			w.WriteHeader(503)
			return
		}
		for _, u := range in.Uses {
			id.uses[u.GrantID] = u.UsedAt
		}
		w.WriteHeader(http.StatusNoContent)
	case strings.HasPrefix(r.URL.Path, "/internal/v1/grants/"):
		ic, err := id.keys.Verify(r.Header.Get(internalctx.Header))
		gid := strings.TrimPrefix(r.URL.Path, "/internal/v1/grants/")
		if err != nil || ic.GrantID != gid {
			w.WriteHeader(401)
			return
		}
		id.mu.Lock()
		g, ok := id.grants[gid]
		id.mu.Unlock()
		if !ok {
			w.WriteHeader(404)
			_, _ = io.WriteString(w, `{"error":"not_found","request_id":"x"}`)
			return
		}
		_ = json.NewEncoder(w).Encode(g)
	case r.URL.Path == "/oauth2/authorize" && r.Method == http.MethodPost:
		body, _ := io.ReadAll(r.Body)
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "s1", Path: "/", HttpOnly: true})
		w.Header().Set("Location", "https://partner.example/cb?code=abc&state="+string(body))
		w.WriteHeader(http.StatusFound)
	case strings.HasPrefix(r.URL.Path, "/oauth2/") || r.URL.Path == "/.well-known/oauth-authorization-server" || strings.HasPrefix(r.URL.Path, "/account"):
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"path": r.URL.Path, "cookie": r.Header.Get("Cookie"), "auth": r.Header.Get("Authorization"),
			"xff": r.Header.Get("X-Forwarded-For"), "ic": r.Header.Get(internalctx.Header)})
	case r.URL.Path == "/v1/restaurants" || r.URL.Path == "/v1/organizations":
		ic, err := id.keys.Verify(r.Header.Get(internalctx.Header))
		if err != nil {
			w.WriteHeader(401)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"grant": ic.GrantID}})
	default:
		w.WriteHeader(404)
	}
}

func (id *identity) setGrant(g *contracts.Grant) {
	id.mu.Lock()
	defer id.mu.Unlock()
	id.grants[g.GrantID] = g
}

func (id *identity) callCount(path string) int {
	id.mu.Lock()
	defer id.mu.Unlock()
	return id.calls[path]
}

func restaurantGrant(gid string, scopes ...string) *contracts.Grant {
	if len(scopes) == 0 {
		scopes = allScopes
	}
	return &contracts.Grant{GrantID: gid, ClientID: clientID, ClientStatus: "approved", UserID: userID, Status: "active",
		ExpiresAt: time.Now().Add(24 * time.Hour), Scopes: scopes, Boundary: "restaurant",
		Restaurants: []contracts.GrantRestaurant{{RestaurantID: restA, TimeZone: "Europe/Helsinki", DayStartHour: 4, Currency: "EUR", Country: "FI", OrganizationIDs: []string{orgA}}}}
}

func orgGrant(gid string, orgs int, scopes ...string) *contracts.Grant {
	if len(scopes) == 0 {
		scopes = allScopes
	}
	g := &contracts.Grant{GrantID: gid, ClientID: clientID, ClientStatus: "approved", UserID: userID, Status: "active",
		ExpiresAt: time.Now().Add(24 * time.Hour), Scopes: scopes, Boundary: "organization",
		Restaurants:   []contracts.GrantRestaurant{{RestaurantID: restC, TimeZone: "Europe/Stockholm", DayStartHour: 5, Currency: "SEK", Country: "SE", OrganizationIDs: []string{org1}}},
		Organizations: []contracts.GrantOrganization{{OrganizationID: org1, RestaurantIDs: []string{restC}}},
	}
	if orgs > 1 {
		g.Restaurants = append(g.Restaurants, contracts.GrantRestaurant{RestaurantID: restD, TimeZone: "Europe/Oslo", Currency: "NOK", Country: "NO", OrganizationIDs: []string{org2}})
		g.Organizations = append(g.Organizations, contracts.GrantOrganization{OrganizationID: org2, RestaurantIDs: []string{restD}})
	}
	return g
}

// tokenOpts tweak a minted token.
type tokenOpts struct {
	gid      string
	scopes   []string
	aud, iss string
	typ      string
	exp      time.Time
	key      any
	alg      jose.SignatureAlgorithm
	kid      string
	sub      string
	jti, fid string
}

func (id *identity) token(t testing.TB, o tokenOpts) string {
	t.Helper()
	if o.gid == "" {
		o.gid = "g-rest"
	}
	if o.scopes == nil {
		o.scopes = allScopes
	}
	if o.aud == "" {
		o.aud = audience
	}
	if o.iss == "" {
		o.iss = baseURL
	}
	if o.typ == "" {
		o.typ = "at+jwt"
	}
	if o.exp.IsZero() {
		o.exp = time.Now().Add(15 * time.Minute)
	}
	if o.key == nil {
		o.key = id.key
	}
	if o.alg == "" {
		o.alg = jose.ES256
	}
	if o.kid == "" {
		o.kid = id.kid
	}
	if o.sub == "" {
		o.sub = userID
	}
	if o.jti == "" {
		o.jti = randomHex(8)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: o.alg, Key: o.key}, (&jose.SignerOptions{}).WithType(jose.ContentType(o.typ)).WithHeader("kid", o.kid))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	claims := map[string]any{"iss": o.iss, "sub": o.sub, "aud": o.aud, "client_id": clientID, "scope": strings.Join(o.scopes, " "),
		"jti": o.jti, "iat": now.Unix(), "exp": o.exp.Unix(), "gid": o.gid}
	if o.fid != "" {
		claims["fid"] = o.fid
	}
	raw, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func noneToken() string {
	enc := base64.RawURLEncoding.EncodeToString
	h := enc([]byte(`{"alg":"none","typ":"at+jwt","kid":"es-1"}`))
	p := enc([]byte(`{"iss":"` + baseURL + `","sub":"user-1","aud":"` + audience + `","client_id":"client-1","scope":"svc.restaurant.read","gid":"g-rest","exp":` + jsonInt(time.Now().Add(time.Hour).Unix()) + `}`))
	return h + "." + p + "."
}

func jsonInt(v int64) string { b, _ := json.Marshal(v); return string(b) }

func otherKeys(t *testing.T) (*ecdsa.PrivateKey, *rsa.PrivateKey) {
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return ek, rk
}

// upstream stands in for a partner service and records what it received.
type upstream struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []*http.Request
	body [][]byte
}

func newUpstream(t testing.TB, h func(w http.ResponseWriter, r *http.Request)) *upstream {
	u := &upstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.reqs = append(u.reqs, r.Clone(context.Background()))
		u.body = append(u.body, b)
		u.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"data":{"ok":true}}`)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstream) last() *http.Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.reqs) == 0 {
		return nil
	}
	return u.reqs[len(u.reqs)-1]
}

func (u *upstream) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.reqs)
}

// env builds a gateway configuration; overrides win.
type env struct {
	t        testing.TB
	id       *identity
	services *upstream
	vars     map[string]string
}

func newEnv(t testing.TB) *env {
	id := newIdentity(t)
	id.setGrant(restaurantGrant("g-rest"))
	svc := newUpstream(t, nil)
	return &env{t: t, id: id, services: svc, vars: map[string]string{
		"PUBLIC_BASE_URL":              baseURL,
		"REDIS_URL":                    testenv.RedisURL(t),
		"INTERNAL_CONTEXT_KEYS":        "k1:" + keySecret,
		"IDENTITY_URL":                 id.srv.URL,
		"ORDERS_URL":                   svc.srv.URL,
		"ACCOUNTING_URL":               svc.srv.URL,
		"MENUS_URL":                    svc.srv.URL,
		"CATALOG_IMPORT_URL":           svc.srv.URL,
		"EVENTS_URL":                   svc.srv.URL,
		"RATE_LIMIT_PER_MINUTE":        "100000",
		"UNAUTH_RATE_LIMIT_PER_MINUTE": "100000",
		"GRANT_CACHE_TTL":              "0s",
		"GRANT_NEGATIVE_CACHE_TTL":     "0s",
		"UPSTREAM_TIMEOUT":             "2s",
	}}
}

type gw struct {
	app  *fiber.App
	g    *server.Gateway
	base *string // set once listening
}

// listen serves the gateway on a real socket (needed where app.Test cannot
// go, e.g. bodies over the limit) and returns its base URL.
func (g gw) listen(t testing.TB) string {
	t.Helper()
	if *g.base != "" {
		return *g.base
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = g.app.Listener(ln) }()
	t.Cleanup(func() { _ = g.app.Shutdown() })
	*g.base = "http://" + ln.Addr().String()
	return *g.base
}

// http is do over a real connection.
func (g gw) http(t testing.TB, method, path, token string, body io.Reader, hdr ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, g.listen(t)+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := response{status: resp.StatusCode, header: resp.Header, body: b}
	_ = json.Unmarshal(b, &r.env)
	return r
}

func (e *env) start(rdb redis.UniversalClient, prefix string) gw {
	e.t.Helper()
	var cfg config.Config
	if err := pkgconfig.LoadMap(context.Background(), &cfg, e.vars); err != nil {
		e.t.Fatal(err)
	}
	if rdb == nil {
		opts, err := redis.ParseURL(e.vars["REDIS_URL"])
		if err != nil {
			e.t.Fatal(err)
		}
		rdb = redis.NewClient(opts)
		e.t.Cleanup(func() { _ = rdb.Close() })
	}
	if prefix == "" {
		prefix = "test:" + randomHex(8) + ":"
	}
	app, g, err := server.New(cfg, server.Deps{Redis: rdb, RateLimitPrefix: prefix})
	if err != nil {
		e.t.Fatal(err)
	}
	return gw{app: app, g: g, base: new(string)}
}

type response struct {
	status int
	header http.Header
	body   []byte
	env    map[string]any
}

func (g gw) do(t testing.TB, method, path, token string, body io.Reader, hdr ...string) response {
	t.Helper()
	req := httptest.NewRequest(method, path, body)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := g.app.Test(req, -1)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := response{status: resp.StatusCode, header: resp.Header, body: b}
	_ = json.Unmarshal(b, &r.env)
	return r
}

func (r response) code() string { s, _ := r.env["error"].(string); return s }

// oversized sends only the head of a request announcing a body one byte over
// the limit and reads the answer: the gateway must refuse it from the
// Content-Length alone, before any of the body is read or parsed.
func (g gw) oversized(t testing.TB, method, path, token string, hdr ...string) response {
	t.Helper()
	base := g.listen(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	head := method + " " + path + " HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nContent-Length: 1048577\r\n"
	if token != "" {
		head += "Authorization: Bearer " + token + "\r\n"
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		head += hdr[i] + ": " + hdr[i+1] + "\r\n"
	}
	if _, err := io.WriteString(conn, head+"\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := response{status: resp.StatusCode, header: resp.Header, body: b}
	_ = json.Unmarshal(b, &r.env)
	return r
}
