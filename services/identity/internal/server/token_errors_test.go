package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"partnerapi.dev/services/identity/internal/flow"
)

// TestTokenEndpointErrors: grant types the server does not offer get their
// RFC 6749 codes with a plain description, and a client that fails to
// authenticate gets 401 with the challenge of RFC 6749 section 5.2.
func TestTokenEndpointErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cases := []struct {
		name, path string
		form       url.Values
		basic      []string
		status     int
		code       string
	}{
		{"password", "/oauth2/token", url.Values{"grant_type": {"password"}, "client_id": {"demo-partner"}, "username": {ownerEmail}, "password": {ownerPW}}, nil, 400, "unsupported_grant_type"},
		{"unknown URN", "/oauth2/token", url.Values{"grant_type": {"urn:example:params:oauth:grant-type:unknown"}, "client_id": {"demo-partner"}}, nil, 400, "unsupported_grant_type"},
		{"client_credentials, public client", "/oauth2/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {"demo-partner"}}, nil, 400, "unauthorized_client"},
		{"client_credentials, confidential client", "/oauth2/token", url.Values{"grant_type": {"client_credentials"}}, []string{"conf-partner", confSecret}, 400, "unauthorized_client"},
		{"wrong secret", "/oauth2/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x.y"}}, []string{"conf-partner", "wrong"}, 401, "invalid_client"},
		{"unknown client", "/oauth2/token", url.Values{"grant_type": {"authorization_code"}, "code": {"x.y"}}, []string{"nobody", "wrong"}, 401, "invalid_client"},
		{"revoke, wrong secret", "/oauth2/revoke", url.Values{"token": {"x.y"}}, []string{"conf-partner", "wrong"}, 401, "invalid_client"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, e.base+c.path, strings.NewReader(c.form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if c.basic != nil {
				req.SetBasicAuth(c.basic[0], c.basic[1])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var out struct {
				Error       string `json:"error"`
				Description string `json:"error_description"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&out)
			if resp.StatusCode != c.status || out.Error != c.code || out.Description == "" || strings.Contains(out.Description, "redirect") {
				t.Fatalf("%d %+v", resp.StatusCode, out)
			}
			if challenge := resp.Header.Get("WWW-Authenticate"); c.status == 401 != strings.HasPrefix(challenge, "Basic ") {
				t.Fatalf("%d WWW-Authenticate %q", resp.StatusCode, challenge)
			}
		})
	}
}

// TestTokenRequestAsJSON: a token request sent as JSON, as a partner new
// to OAuth may send it, is told to send a form, in this API's words rather
// than the OAuth library's.
func TestTokenRequestAsJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range []struct{ path, ct string }{{"/oauth2/token", "application/json"}, {"/oauth2/token", ""}, {"/oauth2/token", "text/plain"}, {"/oauth2/revoke", "application/json"}} {
		ct := c.ct
		req, _ := http.NewRequest(http.MethodPost, e.base+c.path, strings.NewReader(`{"grant_type":"authorization_code","code":"x","token":"x"}`))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if resp.StatusCode != 400 || out.Error != "invalid_request" || !strings.Contains(out.Description, "application/x-www-form-urlencoded") ||
			strings.Contains(out.Description, "can not be empty") {
			t.Errorf("%s with Content-Type %q: %d %+v", c.path, ct, resp.StatusCode, out)
		}
	}
}

// TestRevokedRefreshTokenIsDescribedAsRevoked: a refresh token revoked at
// /oauth2/revoke, or with its family after a reuse, is answered as revoked;
// only the token presented twice is "already used".
func TestRevokedRefreshTokenIsDescribedAsRevoked(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	revoked := func(t *testing.T, err error) {
		t.Helper()
		var te *flow.TokenError
		assertTokenError(t, err, "invalid_grant")
		if !errors.As(err, &te) || !strings.Contains(te.Description, "refresh token was revoked") || strings.Contains(te.Description, "already used") {
			t.Fatalf("%v", err)
		}
	}
	t.Run("at the revocation endpoint", func(t *testing.T) {
		o := e.opts("demo-partner")
		_, tok := e.approve(t, o)
		e.revoke(t, o, tok.RefreshToken, "refresh_token")
		_, err := flow.Refresh(ctx, o, tok.RefreshToken, "")
		revoked(t, err)
	})
	t.Run("with its family after a reuse", func(t *testing.T) {
		o := e.opts("conf-partner")
		_, tok := e.approve(t, o)
		next, err := flow.Refresh(ctx, o, tok.RefreshToken, "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = flow.Refresh(ctx, o, tok.RefreshToken, "")
		assertTokenError(t, err, "invalid_grant")
		if !strings.Contains(err.Error(), "already used") {
			t.Fatalf("reuse: %v", err)
		}
		_, err = flow.Refresh(ctx, o, next.RefreshToken, "")
		revoked(t, err)
	})
}
