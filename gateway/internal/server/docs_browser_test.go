package server_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/getkin/kin-openapi/openapi3"

	"partnerapi.dev/gateway/internal/apidocs"
	"partnerapi.dev/gateway/internal/routes"
	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/pkg/testenv"
)

// TestReferencePageInABrowser opens the gateway's /docs in headless
// Chromium: the page shows every operation of the served document, fetches
// nothing (its Content-Security-Policy allows no address), and a screenshot
// is kept in the test's artifact directory (go test -artifacts).
func TestReferencePageInABrowser(t *testing.T) {
	if _, rendered := apidocs.Page(routes.NamingA); !rendered {
		t.Fatal("the reference pages are not rendered into this build: run make apidocs (make test does)")
	}
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
	ctx, cancelT := context.WithTimeout(ctx, 4*time.Minute)
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
	// Open each tag as a reader would and read the page until the tag's
	// operations show. A click toggles the tag, and Redoc renders late on
	// a loaded machine: click again only after waiting twice as long.
	byTag := map[string][]string{}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if len(op.Tags) > 0 {
				byTag[op.Tags[0]] = append(byTag[op.Tags[0]], op.Summary)
			}
		}
	}
	var text string
	for _, tag := range slices.Sorted(maps.Keys(byTag)) {
		click := fmt.Sprintf(`(%s.find(a => a.innerText.trim() === %q)?.click(), true)`, group, tag)
		wait, deadline := time.Second, time.Now().Add(30*time.Second)
		next := time.Now()
		for {
			if !time.Now().Before(next) {
				if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](click)); err != nil {
					t.Fatal(err)
				}
				next, wait = time.Now().Add(wait), 2*wait
			}
			time.Sleep(200 * time.Millisecond)
			seen, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
			if err != nil {
				t.Fatal(err)
			}
			shown := !slices.ContainsFunc(byTag[tag], func(s string) bool { return !strings.Contains(seen, s) })
			if shown || time.Now().After(deadline) {
				text += seen
				break
			}
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
