package server_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"partnerapi.dev/services/identity/internal/flow"
)

func TestSignInPageCookieAndCSRF(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	v := flow.NewVerifier()
	q := url.Values{"response_type": {"code"}, "client_id": {"demo-partner"}, "redirect_uri": {callbackURI}, "state": {"page-state-123"},
		"code_challenge": {flow.S256(v)}, "code_challenge_method": {"S256"}}
	resp, err := hc.Get(e.base + "/oauth2/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	cookie := resp.Header.Get("Set-Cookie")
	for _, want := range []string{"identity_session=", "HttpOnly", "SameSite=Lax", "Path=/;"} {
		if !strings.Contains(cookie, want) {
			t.Errorf("cookie %q lacks %s", cookie, want)
		}
	}
	if strings.Contains(cookie, "Secure") {
		t.Errorf("Secure cookie on an http base URL: %s", cookie)
	}
	page := string(body)
	for _, want := range []string{`<label for="email">Email</label>`, `<label for="password">Password</label>`, `id="email"`, `id="password"`, `>Sign in</button>`, `name="csrf_token"`, "Demo Partner"} {
		if !strings.Contains(page, want) {
			t.Errorf("sign-in page lacks %s", want)
		}
	}
	f, err := flow.ParseForm(body)
	if err != nil {
		t.Fatal(err)
	}
	action, _ := url.Parse(e.base + f.Action)
	post := func(csrf string) int {
		form := url.Values{"action": {"signin"}, "csrf_token": {csrf}, "email": {ownerEmail}, "password": {ownerPW}}
		resp, err := hc.PostForm(action.String(), form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := post("forged"); st != http.StatusForbidden {
		t.Fatalf("forged CSRF token: %d", st)
	}
	// The refusal changed nothing: the page's own token still signs in.
	if st := post(f.Hidden["csrf_token"]); st != http.StatusSeeOther {
		t.Fatalf("the page's CSRF token after a forged post: %d", st)
	}

}

// TestSessionCookieOfTheOldPathIsRemoved: a browser still holding a session
// cookie of the path the pages used before (/oauth2/) sends it ahead of the
// current one; every page removes it, so signing in sticks.
func TestSessionCookieOfTheOldPathIsRemoved(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	jar, _ := cookiejar.New(nil)
	base, _ := url.Parse(e.base + "/oauth2/")
	jar.SetCookies(base, []*http.Cookie{{Name: "identity_session", Value: "stale", Path: "/oauth2/"}})
	o := e.opts("demo-partner")
	o.HTTP.Jar = jar
	e.approve(t, o)
	for _, c := range jar.Cookies(base) {
		if c.Value == "stale" {
			t.Fatal("the old path's cookie is still sent")
		}
	}
}
