package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"partnerapi.dev/services/identity/internal/flow"
)

// authorizeURL is the request a partner's library builds.
func authorizeURL(base, client, state, verifier string) string {
	q := url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {callbackURI},
		"code_challenge": {flow.S256(verifier)}, "code_challenge_method": {"S256"}}
	if state != "" {
		q.Set("state", state)
	}
	return base + "/oauth2/authorize?" + q.Encode()
}

// TestStateIsOptionalUnderPKCE: with PKCE S256 a client may omit state or
// choose any length; the answer carries state only when the request did, and
// always the issuer (RFC 9207).
func TestStateIsOptionalUnderPKCE(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	for _, state := range []string{"", "x", "abc1234", "a-long-enough-state-value"} {
		t.Run("state "+state, func(t *testing.T) {
			o := e.opts("demo-partner")
			verifier := flow.NewVerifier()
			cb, err := flow.Follow(ctx, o, authorizeURL(e.base, o.ClientID, state, verifier))
			if err != nil {
				t.Fatal(err)
			}
			q := cb.Query()
			if q.Get("error") != "" || q.Get("code") == "" {
				t.Fatalf("callback %s", cb)
			}
			if got, sent := q["state"], state != ""; sent != (len(got) == 1) || sent && got[0] != state {
				t.Fatalf("state %q sent, callback %s", state, cb)
			}
			if q.Get("iss") != e.cfg.PublicBaseURL {
				t.Fatalf("iss: callback %s", cb)
			}
			if _, err := flow.Exchange(ctx, o, &flow.Result{Code: q.Get("code"), Verifier: verifier}); err != nil {
				t.Fatalf("exchange: %v", err)
			}
		})
	}
}

// TestAuthorizationErrorsNameTheIssuer: an error sent back to the client
// carries iss, and state only when the request had one.
func TestAuthorizationErrorsNameTheIssuer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	for _, state := range []string{"", "s1"} {
		o := e.opts("demo-partner")
		o.Deny = true
		cb, err := flow.Follow(ctx, o, authorizeURL(e.base, o.ClientID, state, flow.NewVerifier()))
		if err != nil {
			t.Fatal(err)
		}
		q := cb.Query()
		if q.Get("error") != "access_denied" || q.Get("iss") != e.cfg.PublicBaseURL || q.Get("state") != state || (state == "") != !q.Has("state") {
			t.Errorf("denied with state %q: %s", state, cb)
		}
		// Refused before any page: PKCE plain.
		u := strings.Replace(authorizeURL(e.base, o.ClientID, state, flow.NewVerifier()), "code_challenge_method=S256", "code_challenge_method=plain", 1)
		resp, err := noRedirects().Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusSeeOther || loc == nil || loc.Query().Get("error") != "invalid_request" ||
			loc.Query().Get("iss") != e.cfg.PublicBaseURL || (state == "") != !loc.Query().Has("state") {
			t.Errorf("plain with state %q: %d %s", state, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	var md struct {
		IssParameterSupported bool `json:"authorization_response_iss_parameter_supported"`
	}
	if st := e.call(t, http.MethodGet, "/.well-known/oauth-authorization-server", nil, &md, nil); st != http.StatusOK || !md.IssParameterSupported {
		t.Errorf("metadata: %d %+v", st, md)
	}
}

// TestPKCERefusalWithoutRedirectURIIsAPage: when the request names no
// redirect URI and the client registered several, nothing can be redirected
// to, so the owner reads the refusal on an error page, before any sign-in.
func TestPKCERefusalWithoutRedirectURIIsAPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var out json.RawMessage
	if st := e.admin(t, http.MethodPatch, "/admin/v1/clients/demo-partner", map[string]any{"redirectUris": []string{callbackURI, "http://127.0.0.1:8977/callback"}}, &out); st != http.StatusOK {
		t.Fatalf("patch client: %d %s", st, out)
	}
	for _, method := range []string{"plain", ""} {
		q := url.Values{"response_type": {"code"}, "client_id": {"demo-partner"}, "code_challenge": {flow.S256(flow.NewVerifier())}}
		if method != "" {
			q.Set("code_challenge_method", method)
		}
		resp, err := noRedirects().Get(e.base + "/oauth2/authorize?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		var body [4096]byte
		n, _ := resp.Body.Read(body[:])
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || resp.Header.Get("Location") != "" ||
			strings.Contains(string(body[:n]), "<form") {
			t.Errorf("method %q: %d %s %q", method, resp.StatusCode, resp.Header.Get("Content-Type"), body[:n])
		}
	}
}

func noRedirects() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
