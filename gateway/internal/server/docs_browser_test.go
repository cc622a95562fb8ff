package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/getkin/kin-openapi/openapi3"

	"partnerapi.dev/gateway/internal/apidocs"
	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/pkg/testenv"
)

// TestReferencePageInABrowser opens the gateway's /docs in headless
// Chromium: the page shows every operation of the served document, fetches
// nothing (its Content-Security-Policy allows no address), and a screenshot
// is kept in the test's artifact directory (go test -artifacts).
func TestReferencePageInABrowser(t *testing.T) {
	bin := testenv.Chromium(t)
	e := newEnv(t)
	g := e.start(nil, "")
	r := g.http(t, "GET", "/docs", "", nil)
	if r.status != 200 || r.header.Get("Content-Security-Policy") != apidocs.ContentSecurityPolicy ||
		!strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /docs: %d %v", r.status, r.header)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:0:0],
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 1000),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	defer cancelT()

	page := g.listen(t) + "/docs"
	// The page's requests, as the browser reports them: any for another
	// address must have been refused by the browser before it left.
	var mu sync.Mutex
	elsewhere, refused := map[network.RequestID]string{}, map[network.RequestID]string{}
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			if !strings.HasPrefix(ev.Request.URL, g.listen(t)+"/") && !strings.HasPrefix(ev.Request.URL, "data:") {
				elsewhere[ev.RequestID] = ev.Request.URL
			}
		case *network.EventLoadingFailed:
			if ev.BlockedReason != "" {
				refused[ev.RequestID] = string(ev.BlockedReason)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS(`.api-content`))); err != nil {
		t.Fatal(err)
	}
	// Redoc hydrates the prerendered page. Its navigation lists the tags;
	// open each, as a reader would, to list its operations.
	time.Sleep(2 * time.Second)
	const group = `[...document.querySelectorAll('[data-component-name="Menu/MenuItem"].menu-item-type-group > a')]`
	groups, err := chromedp.Run(ctx, chromedp.Evaluate[int](group+`.length`))
	if err != nil || groups == 0 {
		t.Fatalf("no tags in the navigation (%v)", err)
	}
	var text string
	for i := range groups {
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`(%s[%d].click(), true)`, group, i))); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		seen, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		if err != nil {
			t.Fatal(err)
		}
		text += seen
	}
	if where, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`)); err != nil || where != "/docs" {
		t.Errorf("opening the navigation left the page for %q (%v)", where, err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(apispec.JSON())
	if err != nil {
		t.Fatal(err)
	}
	shown := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Summary == "" {
				t.Errorf("%s %s has no summary to show", method, path)
			} else if !strings.Contains(text, op.Summary) {
				t.Errorf("the page does not show %s %s (%q)", method, path, op.Summary)
			} else {
				shown++
			}
		}
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.ArtifactDir(), "reference-page.png")
	if err := os.WriteFile(out, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	for id, u := range elsewhere {
		if why, ok := refused[id]; ok {
			t.Logf("the browser refused the page's request for %s (%s)", u, why)
		} else {
			t.Errorf("the page sent a request to %s", u)
		}
	}
	mu.Unlock()
	t.Logf("%d tags opened, %d operations shown; screenshot %s", groups, shown, out)
}
