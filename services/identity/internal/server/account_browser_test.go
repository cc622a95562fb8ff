package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/contracts"
)

// TestBrowserConnectedApps drives the connected-apps pages in headless
// Chromium: the owner signs in, sees the demo partner with its scopes in
// plain words, revokes after the confirmation, sees it listed as revoked;
// the partner's next call under that grant is refused. Screenshots of each
// page are kept in the test's artifact directory (go test -artifacts).
func TestBrowserConnectedApps(t *testing.T) {
	t.Parallel()
	bin := testenv.Chromium(t)
	e := newEnv(t)
	_, tok := e.approve(t, e.opts("demo-partner"))
	gid := grantID(t, tok.AccessToken)
	var view json.RawMessage
	if st := e.partner(t, "/v1/restaurants", gid, &view); st != http.StatusOK {
		t.Fatalf("partner call before revocation: %d %s", st, view)
	}

	b := newTab(t, bin, 60*time.Second, chromedp.WindowSize(900, 1000))

	b.do("open the page signed out", chromedp.Navigate(e.base+"/account"), chromedp.WaitVisible(chromedp.CSS(`label[for="email"]`)))
	b.shot("1-sign-in")
	b.do("sign in",
		chromedp.SendKeys(chromedp.CSS(`#email`), ownerEmail),
		chromedp.SendKeys(chromedp.CSS(`#password`), ownerPW),
		chromedp.Click(chromedp.Search(`//button[normalize-space()="Sign in"]`)),
		chromedp.WaitVisible(chromedp.Search(`//h1[normalize-space()="Connected apps"]`)))
	list := b.text()
	for _, want := range []string{"Demo Partner", "See the restaurant's name, business identity and settings", "Alpha Bistro", "Olivia Owner (owner@demo.example)"} {
		if !strings.Contains(list, want) {
			t.Errorf("connected apps page lacks %q:\n%s", want, list)
		}
	}
	b.shot("2-connected-apps")

	b.do("open the confirmation",
		chromedp.Click(chromedp.CSS(`a[href="/account/authorizations/`+gid+`"]`)),
		chromedp.WaitVisible(chromedp.Search(`//h2[normalize-space()="What stops working"]`)))
	if c := b.text(); !strings.Contains(c, "Revoke access for Demo Partner?") || !strings.Contains(c, "can no longer read or change anything of Alpha Bistro") {
		t.Errorf("confirmation page:\n%s", c)
	}
	b.shot("3-confirm")
	revokedAt := time.Now()
	b.do("revoke",
		chromedp.Click(chromedp.Search(`//button[normalize-space()="Revoke access"]`)),
		chromedp.WaitVisible(chromedp.Search(`//p[normalize-space()="Access revoked."]`)))
	if after := b.text(); !strings.Contains(strings.ToLower(after), "demo partner revoked") || !strings.Contains(after, "Revoked on") {
		t.Errorf("the page after revoking does not show the app as revoked:\n%s", after)
	}
	b.shot("4-revoked")

	// Identity's own answer and the grant view the gateway reads (and caches
	// for GRANT_CACHE_TTL) both refuse the partner now.
	if st := e.partner(t, "/v1/restaurants", gid, &view); st != http.StatusForbidden {
		t.Errorf("partner call after revocation: %d %s", st, view)
	}
	var g contracts.Grant
	if st := e.partner(t, "/internal/v1/grants/"+gid, gid, &g); st != http.StatusOK || g.Status != "revoked" {
		t.Errorf("grant view after revocation: %d %+v", st, g)
	}
	t.Logf("refused %v after the click; screenshots in %s", time.Since(revokedAt).Round(time.Millisecond), t.ArtifactDir())
}

// headless starts Chromium with a fresh profile (a session cookie left on
// disk would skip the sign-in page) for at most timeout.
func headless(t *testing.T, bin string, timeout time.Duration, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:0:0],
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(opts, extra...)...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() { cancelT(); cancel(); cancelAlloc() })
	return ctx
}

// tab is a headless Chromium tab a test drives: do runs steps (the
// test fails naming what), text is the page's main content, shot keeps a
// screenshot in the test's artifact directory (go test -artifacts).
type tab struct {
	t   *testing.T
	ctx context.Context
}

func newTab(t *testing.T, bin string, timeout time.Duration, extra ...chromedp.ExecAllocatorOption) tab {
	return tab{t, headless(t, bin, timeout, extra...)}
}

func (b tab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

func (b tab) text() string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(`main`)))
	if err != nil {
		b.t.Fatal(err)
	}
	return s
}

func (b tab) shot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.t.ArtifactDir(), name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}
