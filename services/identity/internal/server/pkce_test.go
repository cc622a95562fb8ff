package server_test

import (
	"errors"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"partnerapi.dev/services/identity/internal/flow"
)

// TestPKCEChallengeIsCheckedBeforeSignIn: a code_challenge that is not 43 to
// 128 unreserved characters with method S256 is refused at once, on the
// redirect, before any page is shown.
func TestPKCEChallengeIsCheckedBeforeSignIn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	good := flow.S256(flow.NewVerifier())
	cases := []struct {
		name, challenge, method string
		ok                      bool
	}{
		{"S256 of a verifier", good, "S256", true},
		{"128 unreserved characters", strings.Repeat("aZ0-._~9", 16), "S256", true},
		{"42 characters", good[:42], "S256", false},
		{"129 characters", strings.Repeat("a", 129), "S256", false},
		{"padding", good[:42] + "=", "S256", false},
		{"base64 alphabet", good[:41] + "+/", "S256", false},
		{"space", good[:42] + " ", "S256", false},
		{"non-ASCII", good[:41] + "é", "S256", false},
		{"missing", "", "S256", false},
		{"no method", good, "", false},
		{"plain", good, "plain", false},
		{"lower-case method", good, "s256", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			jar, _ := cookiejar.New(nil)
			hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			q := url.Values{"response_type": {"code"}, "client_id": {"demo-partner"}, "redirect_uri": {callbackURI}, "state": {"pkce-state-123"}}
			if c.challenge != "" {
				q.Set("code_challenge", c.challenge)
			}
			if c.method != "" {
				q.Set("code_challenge_method", c.method)
			}
			resp, err := hc.Get(e.base + "/oauth2/authorize?" + q.Encode())
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if c.ok {
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("valid challenge: %d %s", resp.StatusCode, resp.Header.Get("Location"))
				}
				return
			}
			loc, _ := url.Parse(resp.Header.Get("Location"))
			if resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusFound || loc == nil ||
				!strings.HasPrefix(loc.String(), callbackURI) || loc.Query().Get("error") != "invalid_request" || loc.Query().Get("state") != "pkce-state-123" {
				t.Fatalf("%d %q", resp.StatusCode, resp.Header.Get("Location"))
			}
		})
	}
	t.Run("unknown client gets the error page", func(t *testing.T) {
		o := e.opts("unknown-partner")
		o.Challenge = "short"
		_, err := flow.Authorize(t.Context(), o)
		var pe *flow.PageError
		if !errors.As(err, &pe) || pe.Status != http.StatusBadRequest {
			t.Fatalf("%v", err)
		}
	})
}
