package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/tools/seed"
	"partnerapi.dev/tools/system"
)

// demoScopes are the scopes the seeded demo client may ask for.
func demoScopes(seedValue uint64) []string {
	for _, c := range (seed.Generator{Seed: seedValue}).GenerateDirectory(seed.SizeDemo).PartnerClients {
		if c.ClientID == seed.DemoClientID {
			return c.AllowedScopes
		}
	}
	return nil
}

// restaurantScopes are scopes without svc.organization.read, which an
// authorization keeps only for an organization boundary.
func restaurantScopes(scopes []string) []string {
	return slices.DeleteFunc(slices.Clone(scopes), func(s string) bool { return s == contracts.ScopeOrganizationRead })
}

// area is one area of the API (a tag of the OpenAPI document) and every
// scope its operations need.
type area struct {
	Name   string
	Scopes []string
}

// areaScopes lists the areas in the document's order, each with the union of
// its operations' scopes in the order of contracts.Scopes.
func areaScopes() ([]area, error) {
	doc, err := apispec.Load()
	if err != nil {
		return nil, err
	}
	need := map[string]map[string]bool{}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.Security == nil || len(op.Tags) == 0 {
				continue
			}
			for _, req := range *op.Security {
				for _, scopes := range req {
					if need[op.Tags[0]] == nil {
						need[op.Tags[0]] = map[string]bool{}
					}
					for _, sc := range scopes {
						need[op.Tags[0]][sc] = true
					}
				}
			}
		}
	}
	var out []area
	for _, tag := range doc.Tags {
		if need[tag.Name] == nil {
			continue
		}
		a := area{Name: tag.Name}
		for _, sc := range contracts.ScopeNames() {
			if need[tag.Name][sc] {
				a.Scopes = append(a.Scopes, sc)
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// token runs the real authorization-code flow with partnerctl and returns
// the access token.
func (s *stack) token(ctx context.Context, email string, scopes []string, boundary ...string) (string, error) {
	args := append([]string{"token",
		"--base-url", s.baseURL, "--email", email, "--password", seed.DemoPassword,
		"--client-id", seed.DemoClientID, "--redirect-uri", s.redirectURI,
		"--scope", strings.Join(scopes, " "), "--json"}, boundary...)
	out, err := exec.CommandContext(ctx, filepath.Join(s.bin, "partnerctl"), args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("demo token for %s: %w: %s", email, err, ee.Stderr)
		}
		return "", fmt.Errorf("demo token for %s: %w", email, err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(out, &tok); err != nil || tok.AccessToken == "" {
		return "", fmt.Errorf("demo token for %s: unexpected output %q", email, out)
	}
	return tok.AccessToken, nil
}

func (s *stack) printWelcome(ctx context.Context) error {
	all := demoScopes(s.seedValue)
	g := seed.Generator{Seed: s.seedValue}
	restaurantToken, err := s.token(ctx, seed.OwnerEmail, restaurantScopes(all))
	if err != nil {
		return err
	}
	orgToken, err := s.token(ctx, seed.AdminEmail, all, "--organization", g.ID("organization/nordic-table"))
	if err != nil {
		return err
	}
	areas, err := areaScopes()
	if err != nil {
		return err
	}
	var needs strings.Builder
	for _, a := range areas {
		fmt.Fprintf(&needs, "  %-30s %s\n", a.Name, strings.Join(a.Scopes, " "))
	}
	var metrics []string
	for _, p := range s.reg.Processes {
		if p.Kubernetes {
			continue
		}
		metrics = append(metrics, s.internalURL(p.Name)+"/metrics")
	}
	restaurant := g.ID("restaurant/kahvila-aalto")
	browser := "  (port of " + s.redirectURI + " is taken: the browser flow is not offered)\n"
	if f := newBrowserFlow(s.baseURL, s.redirectURI); f.Start() == nil {
		s.browser = f
		browser = fmt.Sprintf("  Open this in a browser, sign in with a demo account and approve; the demo partner's\n  callback page then shows the code exchanged for a token:\n\n  %s\n", f.AuthorizeURL())
	}
	fmt.Printf(`
Restaurant Partner API is running at %[1]s

  API reference   %[1]s/docs   (OpenAPI document: %[1]s/v1/openapi.json)
  Connected apps  %[1]s/account   (sign in as a demo owner: see and revoke what the partner may reach)
  Demo sign-in    %[3]s / %[5]s   (owns one restaurant)
                  %[4]s / %[5]s   (administers two organizations)
  Demo client     %[6]s (public, PKCE), redirect %[7]s

Demo access tokens (valid 15 minutes; run partnerctl token for new ones). Each holds every
scope the demo client may ask for, so reads and writes of every area work:

  # restaurant boundary: the owner's Kahvila Aalto (%[8]s)
  export TOKEN=%[2]s
  # organization boundary: Nordic Table Group, approved by its admin
  export ORG_TOKEN=%[13]s

Scopes each area needs (a client asks only for those it uses; an organization boundary also
needs svc.organization.read everywhere):

%[14]s
Try:

  curl -s -H "Authorization: Bearer $TOKEN" %[1]s/v1/restaurants
  curl -s -H "Authorization: Bearer $TOKEN" "%[1]s/v1/restaurants/%[8]s/orders?limit=3"
  curl -s -H "Authorization: Bearer $TOKEN" %[1]s/v1/restaurants/%[8]s/menus
  curl -s -H "Authorization: Bearer $ORG_TOKEN" %[1]s/v1/organizations
  curl -s %[1]s/.well-known/oauth-authorization-server

Create a draft menu (a write; every write carries a fresh idempotencyKey):

  curl -s -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" \
    -d '{"name":"My draft","idempotencyKey":"'$(python3 -c 'import uuid; print(uuid.uuid4())')'"}' \
    %[1]s/v1/restaurants/%[8]s/menus

Watch the demo restaurant's events (numbered from 1; waits up to 30 s for the next one):

  curl -s -H "Authorization: Bearer $TOKEN" "%[1]s/v1/restaurants/%[8]s/events?after=0&wait=30"

Receive them as signed webhooks (local runs accept http://127.0.0.1 endpoints):

  curl -s -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" \
    -d '{"url":"http://127.0.0.1:%[15]d/","eventTypes":["order.created","order.updated","menu.updated"],"idempotencyKey":"'$(python3 -c 'import uuid; print(uuid.uuid4())')'"}' \
    %[1]s/v1/restaurants/%[8]s/webhook-endpoints
  WEBHOOK_SECRET=<the secret of that answer> bin/webhookreceiver --addr 127.0.0.1:%[15]d

Approve the demo partner yourself:

%[9]s
Operators only (internal listeners, never exposed to partners):

  Metrics         %[10]s
  Admin API       ADMIN_TOKEN=$(grep ^ADMIN_TOKEN= %[12]s | cut -d= -f2-) bin/partnerctl clients list --url %[11]s

Press Ctrl-C to stop.
`, s.baseURL, restaurantToken, seed.OwnerEmail, seed.AdminEmail, seed.DemoPassword, seed.DemoClientID, s.redirectURI, restaurant, browser,
		strings.Join(metrics, "   "), s.internalURL("identity"), filepath.Join(s.dir, system.SecretsFile), orgToken, needs.String(), 8099+s.portOffset)
	return nil
}
