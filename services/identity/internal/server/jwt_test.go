package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"golang.org/x/oauth2"

	"partnerapi.dev/services/identity/internal/flow"
)

// verify checks an access token against the published JWKS as a resource
// server would.
func verify(t *testing.T, e *env, token string) (accessClaims, string) {
	t.Helper()
	var set jose.JSONWebKeySet
	resp, err := http.Get(e.base + "/oauth2/jwks")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
		t.Fatal(err)
	}
	for _, k := range set.Keys {
		if k.Use != "sig" || k.Algorithm != "ES256" || k.KeyID == "" || !k.IsPublic() {
			t.Fatalf("bad JWK: %+v", k)
		}
	}
	jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	h := jws.Signatures[0].Header
	if h.ExtraHeaders["typ"] != "at+jwt" {
		t.Fatalf("typ = %v", h.ExtraHeaders["typ"])
	}
	keys := set.Key(h.KeyID)
	if len(keys) != 1 {
		t.Fatalf("kid %s not in JWKS", h.KeyID)
	}
	payload, err := jws.Verify(keys[0])
	if err != nil {
		t.Fatalf("signature: %v", err)
	}
	var claims accessClaims
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatalf("claims %s: %v", payload, err)
	}
	if claims.Audience != e.cfg.TokenAudience {
		t.Fatalf("aud = %q", claims.Audience)
	}
	exp, iat := claims.ExpiresAt, claims.IssuedAt
	if d := exp - iat - int64((15 * time.Minute).Seconds()); d < -2 || d > 2 || exp <= time.Now().Unix() {
		t.Fatalf("exp %d iat %d", exp, iat)
	}
	for c, s := range map[string]string{"iss": claims.Issuer, "sub": claims.Subject, "client_id": claims.ClientID, "scope": claims.Scope, "jti": claims.JTI, "gid": claims.GID} {
		if s == "" {
			t.Fatalf("claim %s missing: %+v", c, claims)
		}
	}
	return claims, h.KeyID
}

// TestOAuth2ClientLibraryAndKeyRotation uses golang.org/x/oauth2 as the
// partner's client, verifies tokens with the JWKS, and rotates the key.
func TestOAuth2ClientLibraryAndKeyRotation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	// The partner's callback, served locally.
	codes := make(chan url.Values, 1)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		codes <- r.URL.Query()
		_, _ = w.Write([]byte("ok"))
	}))
	defer cb.Close()
	redirect := cb.URL + "/callback"
	var out json.RawMessage
	if st := e.admin(t, http.MethodPatch, "/admin/v1/clients/conf-partner", map[string]any{"redirectUris": []string{callbackURI, redirect}}, &out); st != http.StatusOK {
		t.Fatalf("update client: %d %s", st, out)
	}
	conf := &oauth2.Config{
		ClientID: "conf-partner", ClientSecret: confSecret, RedirectURL: redirect,
		Endpoint: oauth2.Endpoint{AuthURL: e.base + "/oauth2/authorize", TokenURL: e.base + "/oauth2/token", AuthStyle: oauth2.AuthStyleInHeader},
		Scopes:   []string{"svc.restaurant.read", "svc.organization.read"},
	}
	verifier := oauth2.GenerateVerifier()
	authURL := conf.AuthCodeURL("state-from-x-oauth2", oauth2.S256ChallengeOption(verifier))

	// Drive the pages with the flow helper, starting from the library's URL.
	u, _ := url.Parse(authURL)
	o := e.opts("conf-partner")
	o.RedirectURI, o.Scope, o.State, o.Verifier = redirect, u.Query().Get("scope"), "state-from-x-oauth2", verifier
	o.Organizations = []string{orgNorth}
	res, err := flow.Authorize(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Callback.Query().Get("code_challenge") != "" || u.Query().Get("code_challenge") != flow.S256(verifier) {
		t.Fatal("library challenge differs")
	}
	tok, err := conf.Exchange(ctx, res.Code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	claims, kid1 := verify(t, e, tok.AccessToken)
	if claims.Scope != "svc.restaurant.read svc.organization.read" {
		t.Fatalf("scope: %q", claims.Scope)
	}

	// Introspection (confidential clients only).
	form := url.Values{"token": {tok.AccessToken}}
	req, _ := http.NewRequest(http.MethodPost, e.base+"/oauth2/introspect", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("conf-partner", confSecret)
	var intro struct {
		Active   bool   `json:"active"`
		ClientID string `json:"client_id"`
	}
	doJSON(t, req, &intro)
	if !intro.Active || intro.ClientID != "conf-partner" {
		t.Fatalf("introspection: %+v", intro)
	}
	req, _ = http.NewRequest(http.MethodPost, e.base+"/oauth2/introspect", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("demo-partner", "")
	if st := doJSON(t, req, nil); st != http.StatusUnauthorized {
		t.Fatalf("public client introspection: %d", st)
	}

	// Rotate: the old token still verifies, new tokens use the new kid.
	var rot map[string]map[string]string
	if st := e.admin(t, http.MethodPost, "/admin/v1/keys/rotate", nil, &rot); st != http.StatusOK {
		t.Fatalf("rotate: %d", st)
	}
	if _, k := verify(t, e, tok.AccessToken); k != kid1 {
		t.Fatal("old token's kid changed")
	}
	tok.Expiry = time.Now().Add(-time.Minute) // force a refresh
	fresh, err := conf.TokenSource(ctx, tok).Token()
	if err != nil {
		t.Fatalf("refresh via library: %v", err)
	}
	if _, kid2 := verify(t, e, fresh.AccessToken); kid2 == kid1 || kid2 != rot["data"]["activeKid"] {
		t.Fatalf("new token kid %s, old %s, active %s", kid2, kid1, rot["data"]["activeKid"])
	}

	// RFC 7009 revocation of the refresh token ends the family.
	form = url.Values{"token": {fresh.RefreshToken}, "token_type_hint": {"refresh_token"}}
	req, _ = http.NewRequest(http.MethodPost, e.base+"/oauth2/revoke", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("conf-partner", confSecret)
	if st := doJSON(t, req, nil); st != http.StatusOK {
		t.Fatalf("revoke: %d", st)
	}
	fresh.Expiry = time.Now().Add(-time.Minute)
	if _, err := conf.TokenSource(ctx, fresh).Token(); err == nil {
		t.Fatal("revoked refresh token still works")
	}

	// Metadata.
	var md struct {
		Issuer        string `json:"issuer"`
		TokenEndpoint string `json:"token_endpoint"`
	}
	if st := e.call(t, http.MethodGet, "/.well-known/oauth-authorization-server", nil, &md, nil); st != 200 || md.Issuer != e.base || md.TokenEndpoint != e.base+"/oauth2/token" {
		t.Fatalf("metadata: %d %+v", st, md)
	}
}

func doJSON(t *testing.T, req *http.Request, out any) int {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		_ = json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}
