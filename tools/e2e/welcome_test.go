package e2e

import (
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/tools/registry"
	"partnerapi.dev/tools/seed"
	"partnerapi.dev/tools/system"
)

// localPort is a loopback address's port, plain or escaped in a URL.
var localPort = regexp.MustCompile(`127\.0\.0\.1(?::|%3A)(\d+)`)

// welcomeTokens checks what `make run` prints a newcomer: a restaurant token
// holding every scope the demo client may have (svc.organization.read is kept
// only for an organization boundary) with which a first write works, an
// organization token, each area's scopes, and the connected-apps page (against
// an E2E_TARGET, the tokens and the page: nothing was printed).
func welcomeTokens(t *testing.T, sys *system.Stack, restaurant string) {
	claims, err := system.TokenClaims(sys.Token)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, s := range contracts.ScopeNames() {
		if s != contracts.ScopeOrganizationRead {
			want = append(want, s)
		}
	}
	if got := strings.Fields(claims.Scope); !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Errorf("the printed TOKEN holds %v, want every scope the demo client may have: %v", got, want)
	}
	st, data := call(t, sys, "POST", "/v1/restaurants/"+restaurant+"/menus", sys.Token,
		map[string]any{"name": "First write", "idempotencyKey": uuid.NewString()})
	if st != 201 || data["menu"] == nil {
		t.Errorf("a first write with the printed TOKEN: %d %v", st, data)
	}

	if sys.OrgToken == "" {
		t.Fatal("make run printed no ORG_TOKEN")
	}
	if a := get(t, sys, "/v1/organizations", sys.OrgToken); a.status != 200 {
		t.Errorf("GET /v1/organizations with the printed ORG_TOKEN: %d %s", a.status, a.body)
	}

	// The connected-apps page is reached through the gateway, and printed.
	if st, body := raw(t, sys.Gateway+"/account", nil); st != 200 || !strings.Contains(body, "Sign in to see your connected apps") {
		t.Errorf("GET /account through the gateway: %d %s", st, body)
	}
	// The API reference page is build output compiled into the gateway:
	// this gateway's build (make build, or the image's) rendered it.
	if st, body := raw(t, sys.Gateway+"/docs", nil); st != 200 || !strings.Contains(body, "<title>Restaurant Partner API reference</title>") {
		t.Errorf("GET /docs through the gateway: %d %.200s", st, body)
	}
	if os.Getenv("E2E_TARGET") != "" {
		return // no make run, nothing printed
	}
	for _, page := range []string{"/account", "/docs"} {
		if !strings.Contains(sys.Welcome, sys.Gateway+page) {
			t.Errorf("make run does not print the page %s%s", sys.Gateway, page)
		}
	}

	// Every local address printed is one of this stack's ports, moved by
	// its port offset (the stack runs at one, as PORT_OFFSET=N make run):
	// the processes', and the demo redirect URI's, which the authorize URL
	// carries escaped.
	gw, _ := url.Parse(sys.Gateway)
	gwPort, _ := strconv.Atoi(gw.Port())
	offset := gwPort - registry.System().Gateway().Port
	ports := map[int]bool{8976 + offset: true, 8099 + offset: true} // the redirect URI, the webhook receiver
	for _, p := range registry.Processes() {
		ports[p.Port+offset], ports[p.InternalPort+offset] = true, true
	}
	for _, m := range localPort.FindAllStringSubmatch(sys.Welcome, -1) {
		if p, _ := strconv.Atoi(m[1]); !ports[p] {
			t.Errorf("make run at port offset %d prints port %d, which the offset did not move: %q", offset, p, m[0])
		}
	}
	if offset != 0 && !strings.Contains(sys.Welcome, url.QueryEscape(seed.RedirectURI(offset))) {
		t.Errorf("the printed authorize URL does not carry the redirect URI of offset %d, %s", offset, seed.RedirectURI(offset))
	}

	doc, err := apispec.Load()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(sys.Welcome, "\n")
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Security == nil || len(*op.Security) == 0 || len(op.Tags) == 0 {
				continue
			}
			i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), op.Tags[0]+" ") })
			if i < 0 {
				t.Errorf("make run does not say which scopes the area %q needs", op.Tags[0])
				continue
			}
			for _, scopes := range (*op.Security)[0] {
				for _, s := range scopes {
					if !slices.Contains(strings.Fields(lines[i]), s) {
						t.Errorf("make run says area %q needs %q; %s %s needs %s too", op.Tags[0], lines[i], method, path, s)
					}
				}
			}
		}
	}
}
