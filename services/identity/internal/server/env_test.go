package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/testenv"
	idconfig "partnerapi.dev/services/identity/internal/config"
	"partnerapi.dev/services/identity/internal/domain"
	"partnerapi.dev/services/identity/internal/flow"
	"partnerapi.dev/services/identity/internal/password"
	"partnerapi.dev/services/identity/internal/server"
	"partnerapi.dev/services/identity/internal/store"
	"partnerapi.dev/services/identity/migrations"
)

func TestMain(m *testing.M) {
	// The same code at the lowest costs (see ClientSecretCost and password.Cost).
	store.ClientSecretCost = bcrypt.MinCost
	password.Cost.MemoryKiB, password.Cost.Passes = 64, 1
	testenv.Main(m)
}

const (
	adminToken = "test-admin-token-0123456789"
	ownerPW    = "correct horse battery"

	userOwner   = "11111111-1111-4111-8111-111111111111"
	userOther   = "11111111-1111-4111-8111-222222222222"
	restA       = "22222222-2222-4222-8222-00000000000a"
	restB       = "22222222-2222-4222-8222-00000000000b"
	restC       = "22222222-2222-4222-8222-00000000000c"
	restD       = "22222222-2222-4222-8222-00000000000d"
	orgNorth    = "33333333-3333-4333-8333-000000000001"
	orgSouth    = "33333333-3333-4333-8333-000000000002"
	callbackURI = "http://127.0.0.1:8976/callback"
)

var (
	encKey     = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	ctxKeys    = "k1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32))
	confSecret = "conf-secret-0123456789abcdef"
	allScopes  = []string{"svc.restaurant.read", "svc.organization.read", "svc.orders.read", "svc.accounting.read"}
	ownerEmail = "owner@demo.example"
	otherEmail = "nobody@demo.example"
)

type env struct {
	t    *testing.T
	base string
	// internal is the base URL of the internal listener (admin API, metrics).
	internal string
	parts    *server.Parts
	db       *database.DB
	cfg      idconfig.Config
	ring     *internalctx.Keyring
}

func newEnv(t testing.TB, mutate ...func(*idconfig.Config)) *env {
	t.Helper()
	ctx := context.Background()
	url := testenv.NewDatabase(t, "identity", database.MigrateURL("identity", migrations.FS, migrations.Go()...))
	db, err := database.Open(ctx, database.Config{URL: config.Secret(url), MaxOpenConns: 10}, "identity")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var cfg idconfig.Config
	if err := config.LoadMap(ctx, &cfg, map[string]string{
		"DATABASE_URL": url, "INTERNAL_CONTEXT_KEYS": ctxKeys, "PUBLIC_BASE_URL": "http://" + ln.Addr().String(),
		"ADMIN_TOKEN": adminToken, "SIGNING_KEY_ENCRYPTION_KEY": encKey,
	}); err != nil {
		t.Fatal(err)
	}
	for _, m := range mutate {
		m(&cfg)
	}
	parts, err := server.Build(ctx, cfg, db, stubMetrics)
	if err != nil {
		t.Fatal(err)
	}
	internalLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = parts.App.Listener(ln) }()
	go func() { _ = parts.Internal.Listener(internalLn) }()
	t.Cleanup(func() {
		_ = parts.App.ShutdownWithTimeout(5 * time.Second)
		_ = parts.Internal.ShutdownWithTimeout(5 * time.Second)
		_ = db.Close(ctx)
	})
	ring, _ := internalctx.ParseKeys(ctxKeys)
	e := &env{base: cfg.PublicBaseURL, internal: "http://" + internalLn.Addr().String(), parts: parts, db: db, cfg: cfg, ring: ring}
	if tt, ok := t.(*testing.T); ok {
		e.t = tt
	}
	e.seed(t)
	return e
}

func ptr[T any](v T) *T { return &v }

func seedDoc() domain.DirectoryImport {
	return domain.DirectoryImport{
		Users: []domain.ImportUser{
			{UserID: userOwner, Email: ownerEmail, Name: "Olivia Owner", Password: ownerPW},
			{UserID: userOther, Email: otherEmail, Name: "No Body", Password: ownerPW},
		},
		Organizations: []domain.ImportOrganization{
			{OrganizationID: orgNorth, Name: "North Group", RegisteredName: "North Group Oy", BusinessID: "1234567-8"},
			{OrganizationID: orgSouth, Name: "South Group", RegisteredName: "South Group AB", BusinessID: "556677-8899"},
		},
		Restaurants: []domain.ImportRestaurant{
			{RestaurantID: restA, Name: "Alpha Bistro", TimeZone: "Europe/Helsinki", DayStartHour: ptr(4), Currency: "EUR", Country: "FI", RegisteredName: "Alpha Oy", BusinessID: "A-1"},
			{RestaurantID: restB, Name: "Beta Diner", TimeZone: "Europe/Helsinki", DayStartHour: ptr(5), Currency: "EUR", Country: "FI", RegisteredName: "Beta Oy", BusinessID: "B-1", OrganizationIDs: []string{orgNorth}},
			{RestaurantID: restC, Name: "Gamma Grill", TimeZone: "Europe/Stockholm", DayStartHour: ptr(6), Currency: "SEK", Country: "SE", RegisteredName: "Gamma AB", BusinessID: "C-1", OrganizationIDs: []string{orgNorth, orgSouth}},
		},
		Memberships: []domain.ImportMembership{
			{UserID: userOwner, RestaurantID: ptr(restA), Role: "owner"},
			{UserID: userOwner, OrganizationID: ptr(orgNorth), Role: "admin"},
			{UserID: userOwner, OrganizationID: ptr(orgSouth), Role: "owner"},
		},
		PartnerClients: []domain.ImportPartnerClient{
			{ClientID: "demo-partner", Name: "Demo Partner", Type: "public", RedirectURIs: []string{callbackURI}, AllowedScopes: allScopes, Status: "approved"},
			{ClientID: "conf-partner", Name: "Confidential Partner", Type: "confidential", Secret: &confSecret, RedirectURIs: []string{callbackURI}, AllowedScopes: allScopes, Status: "approved"},
			{ClientID: "suspended-partner", Name: "Suspended Partner", Type: "public", RedirectURIs: []string{callbackURI}, AllowedScopes: allScopes, Status: "suspended"},
			{ClientID: "pending-partner", Name: "Pending Partner", Type: "public", RedirectURIs: []string{callbackURI}, AllowedScopes: allScopes, Status: "pending"},
		},
	}
}

func (e *env) seed(t testing.TB) {
	t.Helper()
	var out json.RawMessage
	if st := e.admin(t, http.MethodPost, "/admin/v1/directory/import", seedDoc(), &out); st != http.StatusOK {
		t.Fatalf("seed import: %d %s", st, out)
	}
}

// errorAnswer is the error envelope of identity's JSON answers.
type errorAnswer struct {
	Error     string `json:"error"`
	RequestID string `json:"request_id"`
	Message   string `json:"message"`
}

// stubMetrics stands in for the telemetry handler on the internal listener.
var stubMetrics = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("identity_test_metric 1\n")) })

// admin calls the admin API on the internal listener and decodes the answer
// into out.
func (e *env) admin(t testing.TB, method, path string, body any, out any) int {
	t.Helper()
	return e.send(t, e.internal, method, path, body, out, map[string]string{"Authorization": "Bearer " + adminToken})
}

// call sends a request to the public listener.
func (e *env) call(t testing.TB, method, path string, body any, out any, headers map[string]string) int {
	t.Helper()
	return e.send(t, e.base, method, path, body, out, headers)
}

func (e *env) send(t testing.TB, base, method, path string, body any, out any, headers map[string]string) int {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, base+path, r)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if base == e.base && strings.HasPrefix(path, "/v1/") {
		// A partner answer, as the gateway forwards it: checked against the
		// OpenAPI document (RateLimit-Policy is the gateway's, added at the
		// edge).
		u, _ := url.Parse(path)
		h := resp.Header.Clone()
		h.Set("RateLimit-Policy", `"partner";q=60;w=60`)
		apispec.ValidateResponse(t, method, u.Path, u.Query(), resp.StatusCode, h, b)
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
	}
	return resp.StatusCode
}

// partner calls a partner or internal route as the gateway would.
func (e *env) partner(t testing.TB, path, grantID string, out any) int {
	t.Helper()
	h := e.ring.Sign(internalctx.Context{ClientID: "demo-partner", UserID: userOwner, GrantID: grantID, RequestID: "test"})
	return e.call(t, http.MethodGet, path, nil, out, map[string]string{internalctx.Header: h})
}

func (e *env) opts(client string) flow.Options {
	jar, _ := cookiejar.New(nil)
	o := flow.Options{BaseURL: e.base, Email: ownerEmail, Password: ownerPW, ClientID: client, RedirectURI: callbackURI, HTTP: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
	if client == "conf-partner" {
		o.ClientSecret = confSecret
	}
	return o
}

// approve runs the pages and exchanges the code.
func (e *env) approve(t testing.TB, o flow.Options) (*flow.Result, *flow.Token) {
	t.Helper()
	ctx := context.Background()
	res, err := flow.Authorize(ctx, o)
	if err != nil {
		t.Fatalf("authorize: %v", err)
	}
	tok, err := flow.Exchange(ctx, o, res)
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	return res, tok
}

// introspect asks /oauth2/introspect as the confidential client.
func (e *env) introspect(t testing.TB, token string) bool {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.base+"/oauth2/introspect", strings.NewReader("token="+token))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("conf-partner", confSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Active bool }
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return out.Active
}

// accessClaims are the claims of an access token identity issues.
type accessClaims struct {
	Issuer    string `json:"iss"`
	Subject   string `json:"sub"`
	Audience  string `json:"aud"`
	ClientID  string `json:"client_id"`
	Scope     string `json:"scope"`
	JTI       string `json:"jti"`
	FID       string `json:"fid"`
	GID       string `json:"gid"`
	IssuedAt  int64  `json:"iat"`
	ExpiresAt int64  `json:"exp"`
}

// jwtClaims reads an access token's claims without checking its signature.
func jwtClaims(t testing.TB, token string) accessClaims {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c accessClaims
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("claims %s: %v", b, err)
	}
	return c
}

// grantID is the grant an access token was issued under (its gid claim).
func grantID(t testing.TB, token string) string {
	t.Helper()
	c := jwtClaims(t, token)
	if c.GID == "" {
		t.Fatalf("access token has no gid: %+v", c)
	}
	return c.GID
}
