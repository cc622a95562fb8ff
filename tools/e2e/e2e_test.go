// Package e2e runs the whole system the way make run does (devstack with the
// real binaries, real Postgres and Redis, seeded demo data, a token from the
// real OAuth flow) and checks partner calls through the gateway.
//
// With E2E_TARGET naming a JSON file (target), the same tests call a system
// already running there instead, seeded with the demo data: make test-cluster
// points them at the release's Services on its local Kubernetes node. Only
// the telemetry test, which needs processes of its own, is skipped then.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/tools/seed"
	"partnerapi.dev/tools/system"
	"partnerapi.dev/tools/system/systemtest"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// binaries are the system's binaries (system.Build), built once for every
// test package of the run.
func binaries(t *testing.T) string {
	t.Helper()
	return systemtest.Binaries(t, filepath.Join("..", ".."))
}

// localRatePerMinute is the partner rate limit of the system these tests
// start: high enough that they never wait for it (the limit itself is the
// gateway's tests', on real Redis topologies, and the cluster run of these
// tests meets the chart's limit).
const localRatePerMinute = 6000

// ratePerMinute is the gateway's partner rate limit the answers must
// announce: localRatePerMinute, or the target's.
var ratePerMinute = localRatePerMinute

// target describes a running system (E2E_TARGET): its processes' URLs as in
// system.Stack (Gateway, Identity, Orders, Public, Internal), the Secrets
// the tests need (ADMIN_TOKEN) and its gateway's RATE_LIMIT_PER_MINUTE.
type target struct {
	system.Stack
	RateLimitPerMinute int
}

func start(t *testing.T) *system.Stack {
	t.Helper()
	if f := os.Getenv("E2E_TARGET"); f != "" {
		return startTarget(t, f)
	}
	return startWith(t, system.Options{})
}

// startTarget reads the running system of file and gets its demo tokens through
// the real OAuth flow, as devstack does: the owner's for every scope of a
// restaurant boundary, the organization admin's for the organization.
func startTarget(t *testing.T, file string) *system.Stack {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var tg target
	if err := json.Unmarshal(b, &tg); err != nil || tg.Gateway == "" || tg.RateLimitPerMinute <= 0 {
		t.Fatalf("E2E_TARGET %s: %v %s", file, err, b)
	}
	ratePerMinute = tg.RateLimitPerMinute
	sys := tg.Stack
	partnerctl := partnerctlBinary(t)
	var restaurant []string
	for _, s := range contracts.ScopeNames() {
		if s != contracts.ScopeOrganizationRead {
			restaurant = append(restaurant, s)
		}
	}
	sys.Token = scopedToken(t, partnerctl, &sys, seed.OwnerEmail, restaurant)
	org := seed.Generator{Seed: 42}.ID("organization/nordic-table")
	sys.OrgToken = scopedToken(t, partnerctl, &sys, seed.AdminEmail, contracts.ScopeNames(), "--organization", org)
	return &sys
}

// startWith starts the system with o's environment (added to this
// process's) and upstreams.
func startWith(t *testing.T, o system.Options) *system.Stack {
	t.Helper()
	bin := binaries(t)
	dbURL := testenv.NewDatabase(t, "e2e", func(context.Context, string) error { return nil })
	o.Env = append(append(os.Environ(), "DATABASE_URL="+dbURL, "REDIS_URL="+testenv.RedisURL(t),
		fmt.Sprintf("RATE_LIMIT_PER_MINUTE=%d", localRatePerMinute)), o.Env...)
	o.Bin, o.Dir, o.Wait = bin, t.TempDir(), 3*time.Minute
	sys, err := system.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sys.Close(); err != nil {
			t.Errorf("%v\n%s", err, sys.Logs())
		}
	})
	return sys
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func get(t *testing.T, s *system.Stack, path, token string) answer {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.Gateway+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.Header.Get("X-Request-Id") == "" || resp.Header.Get("RateLimit-Policy") != fmt.Sprintf(`"partner";q=%d;w=60`, ratePerMinute) {
		t.Errorf("GET %s: missing X-Request-Id or RateLimit-Policy: %v", path, resp.Header)
	}
	u, _ := url.Parse(path)
	apispec.ValidateResponse(t, http.MethodGet, u.Path, u.Query(), resp.StatusCode, resp.Header, body)
	return answer{resp.StatusCode, resp.Header, body}
}

func TestPartnerCallsThroughTheGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and starts every process")
	}
	sys := start(t)
	g := seed.Generator{Seed: 42}
	aalto := g.ID("restaurant/kahvila-aalto")
	outside := g.ID("restaurant/nordic-helsinki")

	t.Run("restaurants", func(t *testing.T) {
		a := get(t, sys, "/v1/restaurants", sys.Token)
		var got struct {
			Data []struct{ RestaurantID, RestaurantName, Role string }
			Meta struct {
				Boundary string `json:"authorization_boundary"`
			}
		}
		if err := json.Unmarshal(a.body, &got); err != nil || a.status != 200 {
			t.Fatalf("%d %s", a.status, a.body)
		}
		if len(got.Data) != 1 || got.Data[0].RestaurantID != aalto || got.Data[0].Role != "owner" || got.Meta.Boundary != "restaurant" {
			t.Fatalf("restaurants: %s", a.body)
		}
	})

	t.Run("orders pages and details", func(t *testing.T) {
		type page struct {
			Data struct {
				Currency string
				Matches  []struct {
					OrderID string `json:"orderId"`
				}
				NextCursor *string `json:"nextCursor"`
			}
		}
		first := get(t, sys, "/v1/restaurants/"+aalto+"/orders?limit=3", sys.Token)
		var p1 page
		if err := json.Unmarshal(first.body, &p1); err != nil || first.status != 200 || len(p1.Data.Matches) != 3 || p1.Data.NextCursor == nil || p1.Data.Currency != "EUR" {
			t.Fatalf("first page: %d %s", first.status, first.body)
		}
		second := get(t, sys, "/v1/restaurants/"+aalto+"/orders?limit=3&cursor="+url.QueryEscape(*p1.Data.NextCursor), sys.Token)
		var p2 page
		if err := json.Unmarshal(second.body, &p2); err != nil || second.status != 200 || len(p2.Data.Matches) != 3 {
			t.Fatalf("second page: %d %s", second.status, second.body)
		}
		seen := map[string]bool{}
		for _, m := range append(p1.Data.Matches, p2.Data.Matches...) {
			if seen[m.OrderID] {
				t.Fatalf("order %s on two pages", m.OrderID)
			}
			seen[m.OrderID] = true
		}
		id := p1.Data.Matches[0].OrderID
		d := get(t, sys, "/v1/restaurants/"+aalto+"/orders/"+url.PathEscape(id), sys.Token)
		if d.status != 200 || !bytes.Contains(d.body, []byte(`"orderId":"`+id+`"`)) {
			t.Fatalf("details: %d %s", d.status, d.body)
		}
	})

	t.Run("every area through the generated client", func(t *testing.T) { generatedClientCalls(t, sys, aalto) })

	t.Run("catalog import", func(t *testing.T) { catalogImport(t, sys, aalto) })

	t.Run("the tokens make run prints", func(t *testing.T) { welcomeTokens(t, sys, aalto) })

	t.Run("outside the grant looks like nothing", func(t *testing.T) {
		other := get(t, sys, "/v1/restaurants/"+outside+"/orders", sys.Token)
		unknown := get(t, sys, "/v1/restaurants/00000000-0000-4000-8000-000000000000/orders", sys.Token)
		if other.status != 404 || unknown.status != 404 {
			t.Fatalf("got %d and %d", other.status, unknown.status)
		}
		strip := func(b []byte) string {
			var m map[string]any
			_ = json.Unmarshal(b, &m)
			delete(m, "request_id")
			out, _ := json.Marshal(m)
			return string(out)
		}
		if strip(other.body) != strip(unknown.body) {
			t.Fatalf("bodies differ: %s vs %s", other.body, unknown.body)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		if a := get(t, sys, "/v1/restaurants", ""); a.status != 401 || !strings.Contains(a.header.Get("WWW-Authenticate"), "resource_metadata=") {
			t.Fatalf("no token: %d %v", a.status, a.header)
		}
		tampered := sys.Token[:len(sys.Token)-4] + "AAAA"
		if a := get(t, sys, "/v1/restaurants", tampered); a.status != 401 || !strings.Contains(a.header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Fatalf("tampered: %d %v", a.status, a.header)
		}
		a := get(t, sys, "/v1/organizations", sys.Token)
		if a.status != 403 || !strings.Contains(a.header.Get("WWW-Authenticate"), "svc.organization.read") {
			t.Fatalf("missing scope: %d %v %s", a.status, a.header, a.body)
		}
	})

	t.Run("metrics and the admin API only on the internal listeners", func(t *testing.T) {
		admin := map[string]string{"Authorization": "Bearer " + sys.Secrets["ADMIN_TOKEN"]}
		for name, base := range sys.Public {
			if st, body := raw(t, base+"/metrics", nil); st != 404 {
				t.Errorf("%s public /metrics: %d %.200s", name, st, body)
			}
			if st, body := raw(t, sys.Internal[name]+"/metrics", nil); st != 200 || !strings.Contains(body, "go_goroutines") {
				t.Errorf("%s internal /metrics: %d %.200s", name, st, body)
			}
		}
		if st, body := raw(t, sys.Identity+"/admin/v1/clients", admin); st != 404 {
			t.Errorf("identity public /admin/v1/clients: %d %.200s", st, body)
		}
		if st, body := raw(t, sys.Internal["identity"]+"/admin/v1/clients", admin); st != 200 || !strings.Contains(body, seed.DemoClientID) {
			t.Errorf("identity internal /admin/v1/clients: %d %.200s", st, body)
		}
		for _, path := range []string{"/metrics", "/oauth2/%2e%2e/metrics", "/oauth2/..%2fmetrics", "/oauth2/..%2fadmin/v1/clients", "/oauth2/%2e%2e/admin/v1/clients"} {
			if st, body := raw(t, sys.Gateway+path, admin); st == 200 || strings.Contains(body, "go_goroutines") || strings.Contains(body, seed.DemoClientID) {
				t.Errorf("gateway %s: %d %.200s", path, st, body)
			}
		}
	})

	t.Run("bad requests get the envelope and nothing of the request", func(t *testing.T) {
		envelope := func(what string, a answer) {
			t.Helper()
			if a.header.Get("X-Request-Id") == "" || a.header.Get("RateLimit-Policy") == "" || !bytes.Contains(a.body, []byte(`"request_id"`)) {
				t.Errorf("%s: %d %v %s", what, a.status, a.header, a.body)
			}
		}
		addr := strings.TrimPrefix(sys.Gateway, "http://")
		for _, req := range []string{
			"POST /v1/restaurants HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\nAuthorization: Bearer " + sys.Token + "\r\n\r\n",
			"GET /v1/restaurants HTTP/1.1\r\nHost: x\r\nAuthorization : Bearer " + sys.Token + "\r\n\r\n",
		} {
			a := rawRequest(t, addr, req)
			envelope("malformed", a)
			if a.status != 400 || bytes.Contains(a.body, []byte(sys.Token[:40])) {
				t.Errorf("malformed request: %d %s", a.status, a.body)
			}
		}
		for _, v := range []string{"a%00b", "%ff%fe", "%c3%28", "%ed%a0%80", "%c0%af"} {
			a := get(t, sys, "/v1/restaurants/"+aalto+"/orders?order_id="+v, sys.Token)
			if a.status != 400 || !bytes.Contains(a.body, []byte("order_id")) {
				t.Errorf("order_id=%s: %d %s", v, a.status, a.body)
			}
		}
		if a := get(t, sys, "/v1/restaurants/"+aalto+"/orders/a%00b", sys.Token); a.status != 400 || !bytes.Contains(a.body, []byte("orderId")) {
			t.Errorf("orderId a%%00b: %d %s", a.status, a.body)
		}
		a := rawRequest(t, addr, "FOO /v1/restaurants HTTP/1.1\r\nHost: x\r\n\r\n")
		envelope("unknown method", a)
		if a.status != 405 {
			t.Errorf("unknown method: %d %s", a.status, a.body)
		}
		// Each text filter at its longest, percent-encoded: over 5 KB of query.
		long := url.Values{"start_date": {"2026-03-01"}, "end_date": {"2026-03-31"}, "order_id": {strings.Repeat("€", 255)},
			"receipt_reference": {strings.Repeat("€", 255)}, "item_name": {strings.Repeat("€", 100)}}
		if a := get(t, sys, "/v1/restaurants/"+aalto+"/orders?"+long.Encode(), sys.Token); a.status != 200 {
			t.Errorf("longest legal search: %d %s", a.status, a.body)
		}
		if a := get(t, sys, "/v1/restaurants", strings.Repeat("a", 100<<10)); a.status != 401 {
			t.Errorf("100 KB token: %d %s", a.status, a.body)
		}
	})

	// Last: its many writes use up the owner's rate limit.
	t.Run("required and optional fields as documented", func(t *testing.T) { requiredFields(t, sys, aalto) })
	t.Run("unknown query parameters as documented", func(t *testing.T) { unknownQueryParameters(t, sys, aalto) })
	t.Run("no input answers 5xx", func(t *testing.T) { hostileInputs(t, sys, aalto) })
}

// rawRequest writes request bytes as they are and reads one answer.
func rawRequest(t *testing.T, addr, request string) answer {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, body}
}

// raw sends a GET with headers and returns the status and body.
func raw(t *testing.T, url string, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
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
	return resp.StatusCode, string(b)
}

// TestRevokedAccessTokenIsRefusedByTheGateway revokes the demo token at
// identity through the gateway's OAuth surface; the gateway must then
// refuse it, within a second (revocationsReachEveryGateway measures it over
// two gateway processes) and within the grant cache's lifetime
// (GRANT_CACHE_TTL, 5 s here) wherever the system runs.
// It asks once a second, well inside the partner rate limit.
func TestRevokedAccessTokenIsRefusedByTheGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and starts every process")
	}
	sys := start(t)
	if a := get(t, sys, "/v1/restaurants", sys.Token); a.status != 200 {
		t.Fatalf("before revocation: %d %s", a.status, a.body)
	}
	form := url.Values{"token": {sys.Token}, "token_type_hint": {"access_token"}, "client_id": {seed.DemoClientID}}
	resp, err := http.PostForm(sys.Gateway+"/oauth2/revoke", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("revoke: %d", resp.StatusCode)
	}
	var a answer
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		if a = get(t, sys, "/v1/restaurants", sys.Token); a.status != 200 {
			break
		}
	}
	if a.status != 401 || !strings.Contains(a.header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("revoked token: %d %v %s", a.status, a.header, a.body)
	}
	if os.Getenv("E2E_TARGET") != "" {
		revokeOnTheAccountPage(t, sys)
		return
	}
	accountPagesInABrowser(t, sys)
	// Last: approving the demo owner's restaurant again extends the grant
	// behind TOKEN, which half of these revocations end.
	revocationsReachEveryGateway(t, sys, 100)
}

// revokeOnTheAccountPage: the demo administrator revokes the organization
// authorization behind ORG_TOKEN on the connected-apps page, through the
// gateway as a browser would (cookies, CSRF token, forms); the gateway then
// refuses the token within GRANT_CACHE_TTL.
func revokeOnTheAccountPage(t *testing.T, sys *system.Stack) {
	claims, err := system.TokenClaims(sys.OrgToken)
	if err != nil {
		t.Fatal(err)
	}
	if a := get(t, sys, "/v1/organizations", sys.OrgToken); a.status != 200 {
		t.Fatalf("ORG_TOKEN before revocation: %d %s", a.status, a.body)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	csrf := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)
	page := func(method, path string, form url.Values) string {
		t.Helper()
		req, _ := http.NewRequest(method, sys.Gateway+path, strings.NewReader(form.Encode()))
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := browser.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		return string(b)
	}
	confirm := "/account/authorizations/" + claims.GrantID
	p := page(http.MethodGet, confirm, nil)
	m := csrf.FindStringSubmatch(p)
	if m == nil {
		t.Fatalf("no sign-in form at %s:\n%s", confirm, p)
	}
	p = page(http.MethodPost, "/account/sign-in", url.Values{"csrf_token": {m[1]}, "next": {confirm}, "email": {seed.AdminEmail}, "password": {seed.DemoPassword}})
	if m = csrf.FindStringSubmatch(p); m == nil || !strings.Contains(p, "What stops working") {
		t.Fatalf("confirmation page after signing in:\n%s", p)
	}
	p = page(http.MethodPost, confirm+"/revoke", url.Values{"csrf_token": {m[1]}})
	if !strings.Contains(p, "Access revoked.") {
		t.Fatalf("after revoking:\n%s", p)
	}
	revoked := time.Now()
	var a answer
	for deadline := revoked.Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		if a = get(t, sys, "/v1/organizations", sys.OrgToken); a.status != 200 {
			break
		}
	}
	if a.status != 403 || !strings.Contains(string(a.body), "revoked") {
		t.Fatalf("ORG_TOKEN after revoking on the account page: %d %s", a.status, a.body)
	}
	t.Logf("the gateway refused ORG_TOKEN %v after the revocation", time.Since(revoked).Round(100*time.Millisecond))
}
