package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/identity/internal/flow"
)

// TestBrowserSignInConsent drives the real pages in headless Chromium:
// sign in, choose an organization, approve, land on the partner's callback
// with a code; then a second run that denies.
func TestBrowserSignInConsent(t *testing.T) {
	t.Parallel()
	bin := testenv.Chromium(t)
	e := newEnv(t)

	landed := make(chan url.Values, 4)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r) // the browser also asks for /favicon.ico
			return
		}
		landed <- r.URL.Query()
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<!doctype html><title>Partner callback</title><p id=done>Back at the partner</p>"))
	}))
	defer cb.Close()
	redirect := cb.URL + "/callback"
	if st := e.admin(t, http.MethodPatch, "/admin/v1/clients/demo-partner", map[string]any{"redirectUris": []string{callbackURI, redirect}}, nil); st != http.StatusOK {
		t.Fatalf("update client: %d", st)
	}

	run := func(t *testing.T, state string, deny bool) url.Values {
		ctx := headless(t, bin, 60*time.Second)
		verifier := flow.NewVerifier()
		q := url.Values{"response_type": {"code"}, "client_id": {"demo-partner"}, "redirect_uri": {redirect}, "state": {state},
			"scope": {"svc.restaurant.read svc.organization.read"}, "code_challenge": {flow.S256(verifier)}, "code_challenge_method": {"S256"}}
		steps := []chromedp.Action[chromedp.Void]{
			chromedp.Navigate(e.base + "/oauth2/authorize?" + q.Encode()),
			chromedp.WaitVisible(chromedp.CSS(`label[for="email"]`)),
			chromedp.SendKeys(chromedp.CSS(`#email`), ownerEmail),
			chromedp.SendKeys(chromedp.CSS(`#password`), ownerPW),
			chromedp.Click(chromedp.Search(`//button[normalize-space()="Sign in"]`)),
			chromedp.WaitVisible(chromedp.CSS(`input[name="organization"]`)),
		}
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("browser sign-in: %v", err)
		}
		consentText, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`main`)))
		if err != nil {
			t.Fatalf("browser consent text: %v", err)
		}
		if deny {
			steps = []chromedp.Action[chromedp.Void]{chromedp.Click(chromedp.Search(`//button[normalize-space()="Deny"]`))}
		} else {
			steps = []chromedp.Action[chromedp.Void]{
				chromedp.Click(chromedp.Search(`//label[contains(., "North Group")]`)),
				chromedp.Click(chromedp.Search(`//button[normalize-space()="Approve"]`)),
			}
		}
		steps = append(steps, chromedp.WaitVisible(chromedp.CSS(`#done`)))
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("browser consent: %v", err)
		}
		for _, want := range []string{"Demo Partner", "North Group", "2 restaurants", "South Group", "Alpha Bistro", "See the organizations you manage"} {
			if !strings.Contains(consentText, want) {
				t.Errorf("consent page lacks %q:\n%s", want, consentText)
			}
		}
		select {
		case v := <-landed:
			if v.Get("state") != state {
				t.Fatalf("state %q, want %q", v.Get("state"), state)
			}
			if !deny {
				o := e.opts("demo-partner")
				o.RedirectURI = redirect
				tok, err := flow.Exchange(context.Background(), o, &flow.Result{Code: v.Get("code"), Verifier: verifier})
				if err != nil {
					t.Fatalf("exchange of the browser's code: %v", err)
				}
				var g contracts.Grant
				gid := grantID(t, tok.AccessToken)
				e.partner(t, "/internal/v1/grants/"+gid, gid, &g)
				if g.Boundary != "organization" || len(g.Organizations) != 1 {
					t.Fatalf("grant from browser: %+v", g)
				}
			}
			return v
		case <-time.After(5 * time.Second):
			t.Fatal("the callback was not reached")
		}
		return nil
	}

	t.Run("approve", func(t *testing.T) {
		v := run(t, "browser-state-approve", false)
		if v.Get("code") == "" || v.Get("error") != "" {
			t.Fatalf("callback: %v", v)
		}
	})
	t.Run("deny", func(t *testing.T) {
		v := run(t, "browser-state-deny", true)
		if v.Get("error") != "access_denied" || v.Get("code") != "" {
			t.Fatalf("callback: %v", v)
		}
	})
}
