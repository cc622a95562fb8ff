package e2e

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/tools/seed"
	"partnerapi.dev/tools/system"
)

// browser is one headless Chromium with a profile of its own: a device of
// the owner's.
type browser struct {
	t   *testing.T
	ctx context.Context
}

func newBrowser(t *testing.T, bin string) browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:0:0],
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(900, 1200),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelT(); cancel(); cancelAlloc() })
	// The first run starts the browser, bound to its context: this one,
	// not a step's shorter one.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	return browser{t, ctx}
}

func (b browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		page, _ := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(`body`)))
		b.t.Fatalf("%s: %v\n%s", what, err, page)
	}
}

func (b browser) shot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err == nil {
		err = os.WriteFile(filepath.Join(b.t.ArtifactDir(), name+".png"), png, 0o644)
	}
	if err != nil {
		b.t.Fatal(err)
	}
}

var (
	connectedApps = chromedp.WaitVisible(chromedp.Search(`//h1[normalize-space()="Connected apps"]`))
	signInForm    = chromedp.WaitVisible(chromedp.CSS(`label[for="email"]`))
)

// signIn opens the connected-apps page through the gateway and signs in.
func (b browser) signIn(base, email string) {
	b.t.Helper()
	b.do("sign in as "+email,
		chromedp.Navigate(base+"/account"), signInForm,
		chromedp.SendKeys(chromedp.CSS(`#email`), email),
		chromedp.SendKeys(chromedp.CSS(`#password`), seed.DemoPassword),
		chromedp.Click(chromedp.Search(`//button[normalize-space()="Sign in"]`)),
		connectedApps)
}

// accountPagesInABrowser is the administrator's story in headless Chromium
// through the gateway, as every owner reaches the pages (so each form post
// carries the browser's Origin and Sec-Fetch-Site): signed in on two
// devices, they revoke the authorization behind ORG_TOKEN and the partner's
// next call through the gateway is refused within a second; signing out
// ends this device's session only; "Sign out everywhere" ends the other
// device's too.
func accountPagesInABrowser(t *testing.T, sys *system.Stack) {
	bin := testenv.Chromium(t)
	claims, err := system.TokenClaims(sys.OrgToken)
	if err != nil {
		t.Fatal(err)
	}
	if st := callStatus(t, sys.Gateway, sys.OrgToken); st != http.StatusOK {
		t.Fatalf("ORG_TOKEN before revocation: %d", st)
	}
	laptop, phone := newBrowser(t, bin), newBrowser(t, bin)
	laptop.signIn(sys.Gateway, seed.AdminEmail)
	phone.signIn(sys.Gateway, seed.AdminEmail)

	laptop.do("revoke",
		chromedp.Click(chromedp.CSS(`a[href="/account/authorizations/`+claims.GrantID+`"]`)),
		chromedp.WaitVisible(chromedp.Search(`//h2[normalize-space()="What stops working"]`)),
		chromedp.Click(chromedp.Search(`//button[normalize-space()="Revoke access"]`)),
		chromedp.WaitVisible(chromedp.Search(`//p[normalize-space()="Access revoked."]`)))
	revoked := time.Now()
	laptop.shot("account-revoked")
	for callStatus(t, sys.Gateway, sys.OrgToken) == http.StatusOK {
		if time.Since(revoked) > time.Second {
			t.Fatal("the gateway still honours ORG_TOKEN a second after the owner revoked it")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("the gateway refused ORG_TOKEN %v after the revocation on the page", time.Since(revoked).Round(time.Millisecond))

	laptop.do("sign out", chromedp.Click(chromedp.Search(`//button[normalize-space()="Sign out"]`)), signInForm)
	laptop.do("the page after signing out", chromedp.Navigate(sys.Gateway+"/account"), signInForm)
	phone.do("the other device is still signed in", chromedp.Navigate(sys.Gateway+"/account"), connectedApps)

	laptop.signIn(sys.Gateway, seed.AdminEmail)
	laptop.do("sign out everywhere", chromedp.Click(chromedp.Search(`//button[normalize-space()="Sign out everywhere"]`)), signInForm)
	laptop.shot("account-signed-out-everywhere")
	phone.do("the other device after sign out everywhere", chromedp.Navigate(sys.Gateway+"/account"), signInForm)
	body, err := chromedp.Run(phone.ctx, chromedp.Text(chromedp.CSS(`main`)))
	if err != nil || !strings.Contains(body, "Sign in to see your connected apps") {
		t.Fatalf("the other device's page: %v\n%s", err, body)
	}
}
