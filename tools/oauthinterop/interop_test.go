package oauthinterop_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/tools/npmci"
	"partnerapi.dev/tools/seed"
	"partnerapi.dev/tools/system"
	"partnerapi.dev/tools/system/systemtest"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestPartnerLibrariesRunTheWholeFlow starts the system as make run does and
// runs the partner flow with x/oauth2, then with the npm libraries.
func TestPartnerLibrariesRunTheWholeFlow(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and starts every process, installs npm packages")
	}
	npmci.Install(t)
	bin := binaries(t)
	sys := start(t, bin)
	partnerctl := filepath.Join(bin, "partnerctl")

	t.Run("golang.org/x/oauth2", func(t *testing.T) { goOAuth2(t, sys, partnerctl) })
	t.Run("openid-client, jose, oauth4webapi", func(t *testing.T) {
		cmd := exec.Command("node", "interop.mjs")
		cmd.Env = append(os.Environ(), "ISSUER="+sys.Gateway, "CLIENT_ID="+seed.DemoClientID, "REDIRECT_URI="+seed.DemoRedirectURI,
			"PARTNERCTL="+partnerctl, "OWNER_EMAIL="+seed.OwnerEmail, "OWNER_PASSWORD="+seed.DemoPassword)
		out, err := cmd.CombinedOutput()
		t.Logf("%s", out)
		if err != nil {
			t.Fatalf("node interop.mjs: %v", err)
		}
	})
}

func goOAuth2(t *testing.T, sys *system.Stack, partnerctl string) {
	ctx := context.Background()
	var md struct {
		Issuer        string `json:"issuer"`
		Authorization string `json:"authorization_endpoint"`
		Token         string `json:"token_endpoint"`
		ISS           bool   `json:"authorization_response_iss_parameter_supported"`
	}
	getJSON(t, sys.Gateway+"/.well-known/oauth-authorization-server", &md)
	if md.Issuer != sys.Gateway || !md.ISS {
		t.Fatalf("metadata: %+v", md)
	}
	conf := &oauth2.Config{
		ClientID:    seed.DemoClientID,
		Endpoint:    oauth2.Endpoint{AuthURL: md.Authorization, TokenURL: md.Token, AuthStyle: oauth2.AuthStyleInParams},
		RedirectURL: seed.DemoRedirectURI,
		Scopes:      []string{"svc.restaurant.read", "svc.orders.read"},
	}
	var first *oauth2.Token
	for _, state := range []string{"", "st"} {
		verifier := oauth2.GenerateVerifier()
		cmd := exec.Command(partnerctl, "authorize", "--url", conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)),
			"--email", seed.OwnerEmail, "--password", seed.DemoPassword)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("partnerctl authorize: %v %s", err, stderr(err))
		}
		back, err := url.Parse(strings.TrimSpace(string(out)))
		if err != nil {
			t.Fatal(err)
		}
		q := back.Query()
		if q.Get("iss") != md.Issuer || q.Has("state") != (state != "") || q.Get("state") != state {
			t.Fatalf("state %q: redirect %s", state, back)
		}
		tok, err := conf.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatalf("state %q: exchange: %v", state, err)
		}
		resp, err := conf.Client(ctx, tok).Get(sys.Gateway + "/v1/restaurants")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /v1/restaurants: %d", resp.StatusCode)
		}
		if first == nil {
			first = tok
		}
	}
	// An access token that has expired as far as the library knows makes it
	// refresh.
	next, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: first.RefreshToken, Expiry: time.Now().Add(-time.Minute)}).Token()
	if err != nil || next.RefreshToken == first.RefreshToken || next.AccessToken == "" {
		t.Fatalf("refresh: %v", err)
	}
	_, err = conf.TokenSource(ctx, &oauth2.Token{RefreshToken: first.RefreshToken}).Token()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" || !strings.Contains(re.ErrorDescription, "already used") {
		t.Fatalf("reuse: %v", err)
	}
	_, err = conf.TokenSource(ctx, &oauth2.Token{RefreshToken: next.RefreshToken}).Token()
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" || !strings.Contains(re.ErrorDescription, "refresh token was revoked") {
		t.Fatalf("after reuse: %v", err)
	}
}

func getJSON(t *testing.T, u string, out any) {
	t.Helper()
	resp, err := http.Get(u) //nolint:gosec,noctx // the test's own stack
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
	}
}

func stderr(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

// binaries are the system's binaries (system.Build), built once for every
// test package of the run.
func binaries(t *testing.T) string {
	t.Helper()
	return systemtest.Binaries(t, filepath.Join("..", ".."))
}

func start(t *testing.T, bin string) *system.Stack {
	t.Helper()
	dbURL := testenv.NewDatabase(t, "oauthinterop", func(context.Context, string) error { return nil })
	env := append(os.Environ(), "DATABASE_URL="+dbURL, "REDIS_URL="+testenv.RedisURL(t))
	sys, err := system.Start(context.Background(), system.Options{Bin: bin, Dir: t.TempDir(), Env: env, Wait: 3 * time.Minute})
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
