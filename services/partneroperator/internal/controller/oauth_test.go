package controller_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"partnerapi.dev/pkg/testenv"
)

// oauthOwner is a restaurant owner in identity who can approve a partner.
type oauthOwner struct {
	email, password, restaurantID string
	partnerctl                    string
}

// owner imports a user who owns one restaurant, through the admin API, and
// builds partnerctl, which drives identity's sign-in and consent pages.
func (p *identityProcess) owner(t *testing.T) oauthOwner {
	t.Helper()
	o := oauthOwner{email: "owner@acme.example", password: "owner-password-1", restaurantID: uuid.NewString()}
	userID, hour := uuid.NewString(), 4
	body, _ := json.Marshal(map[string]any{
		"users": []map[string]any{{"userId": userID, "email": o.email, "name": "Olga Owner", "password": o.password}},
		"restaurants": []map[string]any{{"restaurantId": o.restaurantID, "name": "Acme Bistro", "timeZone": "Europe/Helsinki",
			"dayStartHour": hour, "currency": "EUR", "country": "FI", "registeredName": "Acme Bistro Oy", "businessId": "1234567-8", "organizationIds": []string{}}},
		"memberships": []map[string]any{{"userId": userID, "restaurantId": o.restaurantID, "role": "owner"}},
	})
	req, _ := http.NewRequest(http.MethodPost, p.adminURL+"/admin/v1/directory/import", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("directory import: %d", resp.StatusCode)
	}
	testenv.Sources(t)
	o.partnerctl = filepath.Join(t.TempDir(), "partnerctl")
	build := exec.Command("go", "build", "-o", o.partnerctl, "./cmd/partnerctl")
	build.Dir = filepath.Join("..", "..", "..", "identity")
	build.Env = append(build.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build partnerctl: %v\n%s", err, out)
	}
	return o
}

type oauthTokens struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

// approve runs the authorization-code flow with PKCE for a public client as
// the owner: sign-in, consent for the restaurant, code exchange.
func (p *identityProcess) approve(t *testing.T, o oauthOwner, clientID, redirectURI, scope string) oauthTokens {
	t.Helper()
	cmd := exec.Command(o.partnerctl, "token", "--base-url", p.publicURL, "--client-id", clientID, "--redirect-uri", redirectURI,
		"--email", o.email, "--password", o.password, "--restaurant", o.restaurantID, "--scope", scope, "--json")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("partnerctl token: %v %s", err, out)
	}
	var tok oauthTokens
	if err := json.Unmarshal(out, &tok); err != nil || tok.AccessToken == "" || tok.RefreshToken == "" {
		t.Fatalf("partnerctl token printed %s (%v)", out, err)
	}
	return tok
}

// refresh asks for new tokens with a refresh token; it returns the status
// and, on success, the new tokens.
func (p *identityProcess) refresh(t *testing.T, clientID, refreshToken string) (int, oauthTokens) {
	t.Helper()
	form := url.Values{"grant_type": {"refresh_token"}, "client_id": {clientID}, "refresh_token": {refreshToken}}
	resp, err := http.Post(p.publicURL+"/oauth2/token", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok oauthTokens
	_ = json.NewDecoder(resp.Body).Decode(&tok)
	return resp.StatusCode, tok
}

// grantOf is the grant id (gid claim) of an access token.
func grantOf(t *testing.T, accessToken string) string {
	t.Helper()
	parts := strings.Split(accessToken, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", accessToken)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		GrantID string `json:"gid"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil || claims.GrantID == "" {
		t.Fatalf("no gid in %s (%v)", payload, err)
	}
	return claims.GrantID
}
