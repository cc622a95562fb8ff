package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	idconfig "partnerapi.dev/services/identity/internal/config"
	"partnerapi.dev/services/identity/internal/domain"
)

const signInAgain = "Sign in to see your connected apps"

// cookieOf is the browser's session cookie value.
func (b *browser) cookieOf() string {
	u, _ := url.Parse(b.e.base + "/account")
	for _, c := range b.http.Jar.Cookies(u) {
		if c.Name == "identity_session" {
			return c.Value
		}
	}
	b.t.Fatal("no session cookie")
	return ""
}

// withCookie is a second browser holding a copy of a session cookie, as
// one copied from another machine would be.
func (b *browser) withCookie(value string) *browser {
	jar, _ := cookiejar.New(nil)
	u, _ := url.Parse(b.e.base + "/")
	jar.SetCookies(u, []*http.Cookie{{Name: "identity_session", Value: value, Path: "/"}})
	return &browser{t: b.t, e: b.e, http: &http.Client{Jar: jar, CheckRedirect: b.http.CheckRedirect}}
}

func signedIn(p page) bool { return strings.Contains(p.body, "<h1>Connected apps</h1>") }

// formOf is what the page's form posting to action sends: its CSRF token,
// the session's, the same in every form of the page.
func formOf(t *testing.T, p page, action string) url.Values {
	t.Helper()
	if !strings.Contains(p.body, `<form method="post" action="`+action+`">`) {
		t.Fatalf("no form to %s:\n%s", action, p.body)
	}
	return url.Values{"csrf_token": {csrfOf(t, p)}}
}

// TestSessionsEndOnTheServer: the cookie is an opaque id; signing out,
// signing out everywhere, the operator and a new password end a session
// at once, copies of its cookie included.
func TestSessionsEndOnTheServer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	seedAccounts(t, e)

	t.Run("the cookie is an opaque id", func(t *testing.T) {
		b, _ := signIn(t, e, ownerEmail, "/account")
		c := b.cookieOf()
		raw, err := base64.RawURLEncoding.DecodeString(c)
		if err != nil || len(raw) != 32 || strings.Contains(c, ".") {
			t.Fatalf("cookie %q is not 32 random bytes", c)
		}
		if bytes.Contains(raw, []byte(userOwner)) || bytes.Contains(raw, []byte("uid")) {
			t.Fatalf("cookie %q carries the user", c)
		}
	})

	t.Run("sign-out ends copies of the cookie", func(t *testing.T) {
		b, list := signIn(t, e, ownerEmail, "/account")
		thief := b.withCookie(b.cookieOf())
		if !signedIn(thief.get("/account")) {
			t.Fatal("the copy does not work before sign-out")
		}
		if out := b.post("/account/sign-out", formOf(t, list, "/account/sign-out")); out.status != http.StatusSeeOther {
			t.Fatalf("sign out: %d", out.status)
		}
		for name, br := range map[string]*browser{"browser": b, "copy": thief} {
			if p := br.get("/account"); signedIn(p) || !strings.Contains(p.body, signInAgain) {
				t.Errorf("%s still signed in after sign-out", name)
			}
		}
	})

	t.Run("sign out everywhere", func(t *testing.T) {
		laptop, list := signIn(t, e, beaEmail, "/account")
		phone, _ := signIn(t, e, beaEmail, "/account")
		other, _ := signIn(t, e, samEmail, "/account")
		out := laptop.post("/account/sign-out-everywhere", formOf(t, list, "/account/sign-out-everywhere"))
		if out.status != http.StatusSeeOther || out.location != "/account" {
			t.Fatalf("sign out everywhere: %d %q", out.status, out.location)
		}
		for name, br := range map[string]*browser{"laptop": laptop, "phone": phone} {
			if signedIn(br.get("/account")) {
				t.Errorf("%s still signed in", name)
			}
		}
		if !signedIn(other.get("/account")) {
			t.Error("another user was signed out too")
		}
	})

	t.Run("the operator signs a user out", func(t *testing.T) {
		b1, _ := signIn(t, e, eveEmail, "/account")
		b2, _ := signIn(t, e, eveEmail, "/account")
		var out struct {
			Data struct {
				EndedSessions int `json:"endedSessions"`
			} `json:"data"`
		}
		if st := e.admin(t, http.MethodDelete, "/admin/v1/users/"+userEve+"/sessions", nil, &out); st != http.StatusOK || out.Data.EndedSessions != 2 {
			t.Fatalf("end sessions: %d %+v", st, out)
		}
		if signedIn(b1.get("/account")) || signedIn(b2.get("/account")) {
			t.Fatal("signed in after the operator ended the sessions")
		}
		if st := e.admin(t, http.MethodDelete, "/admin/v1/users/urn:uuid:"+userEve+"/sessions", nil, nil); st != http.StatusNotFound {
			t.Fatalf("user id as a URN: %d", st)
		}
	})

	t.Run("a new password ends the sessions", func(t *testing.T) {
		b, _ := signIn(t, e, otherEmail, "/account")
		doc := seedDoc()
		doc.Users = []domain.ImportUser{{UserID: userOther, Email: otherEmail, Name: "No Body", Password: ownerPW + " again"}}
		if st := e.admin(t, http.MethodPost, "/admin/v1/directory/import", doc, nil); st != http.StatusOK {
			t.Fatalf("import: %d", st)
		}
		if signedIn(b.get("/account")) {
			t.Fatal("signed in after the password changed")
		}
	})
}

// TestSessionLifetimes: a session ends after SESSION_IDLE_TIMEOUT without a
// page, and after SESSION_MAX_AGE however busy.
func TestSessionLifetimes(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	e := newEnv(t, func(c *idconfig.Config) { c.SessionIdleTimeout, c.SessionMaxAge = 10*time.Minute, 25*time.Minute })
	e.parts.Store.SetClock(clock)

	b, _ := signIn(t, e, ownerEmail, "/account")
	advance(9 * time.Minute)
	if !signedIn(b.get("/account")) {
		t.Fatal("ended within the idle timeout")
	}
	advance(9 * time.Minute) // 18 minutes in, 9 since the last page
	if !signedIn(b.get("/account")) {
		t.Fatal("a page did not start the idle timeout again")
	}
	advance(8 * time.Minute) // 26 minutes in: past the maximum age
	if signedIn(b.get("/account")) {
		t.Fatal("signed in past SESSION_MAX_AGE")
	}

	b, _ = signIn(t, e, ownerEmail, "/account")
	advance(11 * time.Minute)
	if signedIn(b.get("/account")) {
		t.Fatal("signed in past SESSION_IDLE_TIMEOUT")
	}
}

// TestCrossSiteFormsRefused: a form post that the browser marks as
// cross-site, or whose Origin or Referer is another site, is refused even
// with a valid CSRF token, and changes nothing: the grant stays, the
// session stays signed in. A refused forged token signs nobody out either.
func TestCrossSiteFormsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := seedAccounts(t, e)
	b, p := signIn(t, e, beaEmail, "/account/authorizations/"+g.b)
	token := csrfOf(t, p)
	send := func(path string, h map[string]string, form url.Values) page {
		req, _ := http.NewRequest(http.MethodPost, e.base+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		return b.do(req)
	}
	for _, h := range []map[string]string{
		{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"},
		{"Origin": "https://evil.example"},
		{"Origin": "null", "Sec-Fetch-Site": "cross-site"},
		{"Origin": "null"},
		{"Referer": "https://evil.example/page"},
		{"Referer": e.base + ".evil.example/"},
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site", "Origin": "http://sub." + strings.TrimPrefix(e.base, "http://")},
	} {
		for _, path := range []string{"/account/authorizations/" + g.b + "/revoke", "/account/sign-out", "/account/sign-out-everywhere", "/account/sign-in", "/oauth2/authorize"} {
			if r := send(path, h, url.Values{"csrf_token": {token}, "action": {"consent"}}); r.status != http.StatusForbidden || !strings.Contains(r.body, "sent from another site") {
				t.Errorf("POST %s with %v: %d", path, h, r.status)
			}
		}
	}
	if st := e.grantStatus(t, g.b); st != "active" {
		t.Fatalf("grant %s after cross-site posts", st)
	}
	if r := b.revoke(g.b, "forged"); r.status != http.StatusForbidden {
		t.Fatalf("forged token: %d", r.status)
	}
	if !signedIn(b.get("/account")) {
		t.Fatal("a refused post signed the owner out")
	}
	// The browser's own same-origin post, with its Origin, works.
	r := send("/account/authorizations/"+g.b+"/revoke", map[string]string{"Origin": e.base, "Sec-Fetch-Site": "same-origin", "Referer": e.base + "/account"},
		url.Values{"csrf_token": {token}})
	if r.status != http.StatusSeeOther || e.grantStatus(t, g.b) != "revoked" {
		t.Fatalf("same-origin revoke: %d", r.status)
	}
}

// TestPageHeaders: every identity page forbids framing, sniffing, base
// changes and form posts anywhere but here; the consent page also allows
// the partner's registered redirect, where its answer goes.
func TestPageHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b, _ := signIn(t, e, ownerEmail, "/account")
	consent := consentPage(t, e, b)
	pages := map[string]*http.Response{}
	for name, path := range map[string]string{"account": "/account", "not found": "/account/authorizations/00000000-0000-4000-8000-000000000000",
		"authorize error": "/oauth2/authorize?client_id=nobody"} {
		resp, err := b.http.Get(e.base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		pages[name] = resp
	}
	anon, _ := http.Get(e.base + "/account")
	anon.Body.Close()
	pages["sign-in"] = anon
	pages["consent"] = consent
	for name, resp := range pages {
		csp := resp.Header.Get("Content-Security-Policy")
		wantForm := "form-action 'self';"
		if name == "consent" {
			wantForm = "form-action 'self' http://127.0.0.1:8976;"
		}
		for _, want := range []string{wantForm, "base-uri 'none'", "frame-ancestors 'none'", "default-src 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", name, csp, want)
			}
		}
		if strings.Contains(csp, "*") {
			t.Errorf("%s: CSP %q allows any source", name, csp)
		}
		if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q", name, got)
		}
		// Not no-referrer: under it a browser sends the pages' own forms with
		// Origin: null, which the cross-site check cannot tell from a
		// sandboxed attacker's.
		if got := resp.Header.Get("Referrer-Policy"); got != "same-origin" {
			t.Errorf("%s: Referrer-Policy %q", name, got)
		}
		if got := resp.Header.Get("X-Frame-Options"); got != "DENY" {
			t.Errorf("%s: X-Frame-Options %q", name, got)
		}
	}
}

// consentPage opens the demo partner's authorization request in a
// signed-in browser.
func consentPage(t *testing.T, e *env, b *browser) *http.Response {
	t.Helper()
	q := url.Values{"response_type": {"code"}, "client_id": {"demo-partner"}, "redirect_uri": {callbackURI}, "state": {"headers-state"},
		"code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"}, "code_challenge_method": {"S256"}, "scope": {"svc.restaurant.read"}}
	resp, err := b.http.Get(e.base + "/oauth2/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("consent page: %d", resp.StatusCode)
	}
	return resp
}

// errorLog records the level of every log line at ERROR.
type errorLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *errorLog) Enabled(_ context.Context, lv slog.Level) bool { return lv >= slog.LevelError }
func (l *errorLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, r.Message)
	return nil
}
func (l *errorLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *errorLog) WithGroup(string) slog.Handler      { return l }

// TestIDSpellings: an id in a page path, a form or the admin API is read
// in its one canonical spelling only. Every other spelling of a real id is
// not found (400 in a query filter), never a server error, and logs no
// error. Not parallel: it watches the process's log.
func TestIDSpellings(t *testing.T) {
	e := newEnv(t)
	g := seedAccounts(t, e)
	logs := &errorLog{}
	prev := slog.Default()
	slog.SetDefault(slog.New(logs))
	t.Cleanup(func() { slog.SetDefault(prev) })

	spellings := func(id string) []string {
		return []string{"urn:uuid:" + id, "URN:UUID:" + id, "{" + id + "}", strings.ToUpper(id), strings.ReplaceAll(id, "-", ""),
			id + " ", " " + id, id[:35], id + "0", "00000000-0000-0000-0000-00000000000g", "..", "a\u200fb"}
	}
	b, list := signIn(t, e, beaEmail, "/account")
	token := csrfOf(t, list)
	for _, raw := range spellings(g.b) {
		s := url.PathEscape(raw)
		for _, p := range []page{
			b.get("/account/authorizations/" + s),
			b.revoke(s, token),
			b.post("/account/authorizations/"+s+"/approve-new", url.Values{"csrf_token": {token}, "organization_id": {strings.ToUpper(orgNorth)}}),
		} {
			if p.status != http.StatusNotFound {
				t.Errorf("account page with grant %q: %d", raw, p.status)
			}
		}
		for _, c := range []struct {
			method, path string
			want         int
		}{
			{http.MethodGet, "/admin/v1/grants/" + s, http.StatusNotFound},
			{http.MethodPost, "/admin/v1/grants/" + s + "/revoke", http.StatusNotFound},
			{http.MethodDelete, "/admin/v1/users/" + s + "/sessions", http.StatusNotFound},
			{http.MethodGet, "/admin/v1/grants?userId=" + url.QueryEscape(raw), http.StatusBadRequest},
			{http.MethodGet, "/admin/v1/connected-apps?userId=" + url.QueryEscape(raw), http.StatusBadRequest},
			{http.MethodGet, "/admin/v1/connected-apps?restaurantId=" + url.QueryEscape(raw), http.StatusBadRequest},
		} {
			var out json.RawMessage
			if st := e.admin(t, c.method, c.path, nil, &out); st != c.want {
				t.Errorf("%s %s: %d, want %d", c.method, c.path, st, c.want)
			}
		}
		var out json.RawMessage
		if st := e.partner(t, "/internal/v1/grants/"+s, "", &out); st != http.StatusNotFound {
			t.Errorf("internal grant %q: %d", raw, st)
		}
	}
	if st := e.grantStatus(t, g.b); st != "active" {
		t.Fatalf("grant %s after other spellings", st)
	}
	logs.mu.Lock()
	defer logs.mu.Unlock()
	if len(logs.lines) > 0 {
		t.Fatalf("error log lines: %q", logs.lines)
	}
}

// TestOrganizationApprovalNeedsItsScope: an app that did not ask for
// svc.organization.read, which every call under an organization approval
// needs, is offered the owner's restaurants only, with the reason; an
// organization posted anyway is refused on the redirect and makes no grant.
func TestOrganizationApprovalNeedsItsScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b, _ := signIn(t, e, ownerEmail, "/account")
	authorize := func(scope string) page {
		q := url.Values{"response_type": {"code"}, "client_id": {"demo-partner"}, "redirect_uri": {callbackURI}, "state": {"org-scope"},
			"code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"}, "code_challenge_method": {"S256"}, "scope": {scope}}
		return b.get("/oauth2/authorize?" + q.Encode())
	}
	with := authorize("svc.restaurant.read svc.organization.read")
	if !strings.Contains(with.body, `name="organization"`) || strings.Contains(with.body, "did not ask to see your organizations") {
		t.Fatalf("consent with the organization scope offers no organization:\n%s", with.body)
	}
	without := authorize("svc.restaurant.read svc.orders.read")
	if strings.Contains(without.body, `name="organization"`) || !strings.Contains(without.body, "did not ask to see your organizations (svc.organization.read)") ||
		!strings.Contains(without.body, `name="restaurant"`) {
		t.Fatalf("consent without the organization scope:\n%s", without.body)
	}
	before, err := e.parts.Store.Grants(context.Background(), "demo-partner", userOwner)
	if err != nil {
		t.Fatal(err)
	}
	r := b.submit(without, url.Values{"decision": {"approve"}, "organization": {orgNorth}})
	if r.status != http.StatusSeeOther || !strings.Contains(r.location, "error=invalid_request") {
		t.Fatalf("an organization posted anyway: %d %q", r.status, r.location)
	}
	after, _ := e.parts.Store.Grants(context.Background(), "demo-partner", userOwner)
	if len(after) != len(before) {
		t.Fatalf("a grant was made: %d before, %d after", len(before), len(after))
	}
}
