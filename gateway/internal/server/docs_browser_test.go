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
	doc, err := openapi3.NewLoader().LoadFromData(apispec.JSON())
	if err != nil {
		t.Fatal(err)
	}
	// A tag's operations show once Redoc has rendered them: read the page
	// after each click, and go round the tags again, waiting longer each
	// round, until every operation has been seen.
	var text string
	for round := 1; round <= 5 && len(unshown(doc, text)) > 0; round++ {
		for i := range groups {
			if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`(%s[%d].click(), true)`, group, i))); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Duration(round) * 300 * time.Millisecond)
			seen, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
			if err != nil {
				t.Fatal(err)
			}
			text += seen
		}
	}
	if where, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`)); err != nil || where != "/docs" {
		t.Errorf("opening the navigation left the page for %q (%v)", where, err)
	}
	missing := unshown(doc, text)
	for _, op := range missing {
		t.Errorf("the page does not show %s", op)
	}
	// The first screen, with the navigation open: Redoc renders sections
	// as they scroll into view, so a full-page shot would be mostly blank.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(window.scrollTo(0, 0), true)`)); err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
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
			t.Errorf("the page asked for %s (the browser refused it: %s)", u, why)
		} else {
			t.Errorf("the page sent a request to %s", u)
		}
	}
	mu.Unlock()
	t.Logf("%d tags opened, %d operations shown; screenshot %s", groups, operations(doc)-len(missing), out)
}

// unshown lists the operations of doc whose summary text does not hold
// (an operation without a summary is never shown).
func unshown(doc *openapi3.T, text string) []string {
	var out []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Summary == "" || !strings.Contains(text, op.Summary) {
				out = append(out, fmt.Sprintf("%s %s (%q)", method, path, op.Summary))
			}
		}
	}
	return out
}

// operations counts the operations of doc.
func operations(doc *openapi3.T) int {
	n := 0
	for _, item := range doc.Paths.Map() {
		n += len(item.Operations())
	}
	return n
}
