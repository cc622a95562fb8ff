package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"partnerapi.dev/services/identity/internal/flow"
)

// consentPage signs in as the owner for an authorization request and
// returns the consent page's form, the browser that saw it, and the PKCE
// verifier.
func (e *env) consentPage(t *testing.T, scope string) (*flow.Form, *http.Client, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	v := flow.NewVerifier()
	q := url.Values{"response_type": {"code"}, "client_id": {"demo-partner"}, "redirect_uri": {callbackURI}, "state": {"consent-state-1"},
		"scope": {scope}, "code_challenge": {flow.S256(v)}, "code_challenge_method": {"S256"}}
	page := func(resp *http.Response) *flow.Form {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		f, err := flow.ParseForm(body)
		if err != nil {
			t.Fatalf("%d: %v", resp.StatusCode, err)
		}
		return f
	}
	resp, err := hc.Get(e.base + "/oauth2/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	f := page(resp)
	form := url.Values{"action": {"signin"}, "csrf_token": {f.Hidden["csrf_token"]}, "email": {ownerEmail}, "password": {ownerPW}}
	resp, err = hc.PostForm(e.base+f.Action, form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = hc.Get(e.base + resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	f = page(resp)
	if f.Kind() != "consent" {
		t.Fatalf("not the consent page: %+v", f)
	}
	return f, hc, v
}

// post answers the consent form, to action (relative to the base URL),
// with the page's hidden fields and extra; it returns the redirect's query,
// or nil and the status when the answer is a page.
func (e *env) post(t *testing.T, hc *http.Client, action string, f *flow.Form, extra url.Values) (url.Values, int) {
	t.Helper()
	form := url.Values{}
	for k, v := range f.Hidden {
		form.Set(k, v)
	}
	for k, v := range extra {
		form[k] = v
	}
	resp, err := hc.PostForm(e.base+action, form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if !strings.HasPrefix(loc, callbackURI) {
		return nil, resp.StatusCode
	}
	u, _ := url.Parse(loc)
	return u.Query(), resp.StatusCode
}

// TestConsentApprovesOnlyWhatThePageShowed: the consent decision is bound
// to a server-side record of the request the page displayed. Editing the
// form or its action cannot add a scope, change the client, redirect or
// PKCE challenge, or choose something the page did not offer; a page is
// answered once, and only by the browser session that saw it.
func TestConsentApprovesOnlyWhatThePageShowed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	exchange := func(t *testing.T, q url.Values, verifier string) *flow.Token {
		t.Helper()
		if q == nil || q.Get("code") == "" {
			t.Fatalf("no code: %v", q)
		}
		tok, err := flow.Exchange(ctx, e.opts("demo-partner"), &flow.Result{Code: q.Get("code"), Verifier: verifier})
		if err != nil {
			t.Fatalf("exchange: %v", err)
		}
		return tok
	}
	approve := url.Values{"decision": {"approve"}, "restaurant": {restA}}

	t.Run("scope added to the form action", func(t *testing.T) {
		f, hc, v := e.consentPage(t, "svc.restaurant.read")
		action, _ := url.Parse(f.Action)
		q := action.Query()
		for k, val := range map[string]string{"response_type": "code", "client_id": "demo-partner", "redirect_uri": callbackURI, "state": "consent-state-1",
			"code_challenge": flow.S256(v), "code_challenge_method": "S256"} {
			if q.Get(k) == "" {
				q.Set(k, val)
			}
		}
		q.Set("scope", "svc.restaurant.read svc.accounting.read")
		action.RawQuery = q.Encode()
		extra := url.Values{"scope": {"svc.restaurant.read svc.accounting.read"}}
		for k, val := range approve {
			extra[k] = val
		}
		got, st := e.post(t, hc, action.String(), f, extra)
		if got == nil {
			t.Logf("refused with %d", st)
			return
		}
		if got.Get("state") != "consent-state-1" {
			t.Fatalf("state: %v", got)
		}
		tok := exchange(t, got, v)
		if tok.Scope != "svc.restaurant.read" || jwtClaims(t, tok.AccessToken).Scope != "svc.restaurant.read" {
			t.Fatalf("token scope %q, the page showed only svc.restaurant.read", tok.Scope)
		}
		var g struct{ Scopes []string }
		gid := grantID(t, tok.AccessToken)
		e.partner(t, "/internal/v1/grants/"+gid, gid, &g)
		if len(g.Scopes) != 1 || g.Scopes[0] != "svc.restaurant.read" {
			t.Fatalf("grant scopes %v", g.Scopes)
		}
	})
	t.Run("another redirect URI or challenge in the action", func(t *testing.T) {
		f, hc, v := e.consentPage(t, "svc.restaurant.read")
		attacker := flow.NewVerifier()
		q := url.Values{"response_type": {"code"}, "client_id": {"conf-partner"}, "redirect_uri": {callbackURI}, "state": {"attacker-state"},
			"code_challenge": {flow.S256(attacker)}, "code_challenge_method": {"S256"}}
		got, _ := e.post(t, hc, "/oauth2/authorize?"+q.Encode(), f, approve)
		if got == nil {
			return
		}
		if got.Get("state") != "consent-state-1" {
			t.Fatalf("the redirect carries the edited request: %v", got)
		}
		// The code is demo-partner's, bound to the challenge the page showed.
		exchange(t, got, v)
	})
	t.Run("a restaurant the page did not offer", func(t *testing.T) {
		f, hc, _ := e.consentPage(t, "svc.restaurant.read")
		got, st := e.post(t, hc, f.Action, f, url.Values{"decision": {"approve"}, "restaurant": {restB}})
		if got != nil && (got.Get("code") != "" || got.Get("error") != "invalid_request") || got == nil && st < 400 {
			t.Fatalf("%d %v", st, got)
		}
	})
	t.Run("a page is answered once", func(t *testing.T) {
		f, hc, v := e.consentPage(t, "svc.restaurant.read")
		got, _ := e.post(t, hc, f.Action, f, approve)
		exchange(t, got, v)
		if got, st := e.post(t, hc, f.Action, f, approve); got != nil || st != http.StatusBadRequest {
			t.Fatalf("second answer: %d %v", st, got)
		}
	})
	t.Run("another session cannot answer the page", func(t *testing.T) {
		f, _, _ := e.consentPage(t, "svc.restaurant.read")
		otherForm, other, _ := e.consentPage(t, "svc.restaurant.read")
		// The other browser's own CSRF token, with this page's consent id.
		forged := *otherForm
		forged.Hidden = map[string]string{"action": "consent", "csrf_token": otherForm.Hidden["csrf_token"], "consent_id": f.Hidden["consent_id"]}
		if got, st := e.post(t, other, f.Action, &forged, approve); got != nil || st != http.StatusBadRequest {
			t.Fatalf("%d %v", st, got)
		}
	})
	t.Run("the form carries no request parameters", func(t *testing.T) {
		f, _, _ := e.consentPage(t, "svc.restaurant.read")
		if f.Hidden["consent_id"] == "" || strings.Contains(f.Action, "?") {
			t.Fatalf("form %+v", f)
		}
	})
}
