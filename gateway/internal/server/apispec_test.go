package server_test

import (
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"partnerapi.dev/gateway/internal/routes"
	"partnerapi.dev/pkg/apispec"
)

// The OpenAPI document and the route table describe the same operations with
// the same scopes.
func TestRouteTableMatchesTheOpenAPIDocument(t *testing.T) {
	for set, served := range map[routes.NamingSet][]byte{routes.NamingA: apispec.JSON(), routes.NamingB: apispec.NamingSetB()} {
		t.Run(string(set), func(t *testing.T) {
			doc, err := openapi3.NewLoader().LoadFromData(served)
			if err != nil {
				t.Fatal(err)
			}
			routeTableMatches(t, routes.Table(set), doc)
		})
	}
}

func routeTableMatches(t *testing.T, table []routes.Operation, doc *openapi3.T) {
	seen := map[string]bool{}
	for _, op := range table {
		item := doc.Paths.Find(op.Path)
		if item == nil {
			t.Errorf("%s: path %s not documented", op.ID, op.Path)
			continue
		}
		dop := item.GetOperation(op.Method)
		if dop == nil {
			t.Errorf("%s: %s %s not documented", op.ID, op.Method, op.Path)
			continue
		}
		seen[op.Method+" "+op.Path] = true
		if dop.OperationID != op.ID {
			t.Errorf("operationId %q, route table %q", dop.OperationID, op.ID)
		}
		if dop.Security == nil || len(*dop.Security) != 1 {
			t.Errorf("%s: security %v", op.ID, dop.Security)
			continue
		}
		got := append([]string{}, (*dop.Security)[0]["partnerOAuth"]...)
		want := append([]string{}, op.Scopes...)
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: documented scopes %v, route table %v", op.ID, got, want)
		}
		if _, ok := dop.Responses.Map()["503"]; !ok {
			t.Errorf("%s: no 503", op.ID)
		}
	}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if strings.HasPrefix(path, "/v1/restaurants") || path == "/v1/organizations" {
				if !seen[method+" "+path] {
					t.Errorf("documented %s %s is not in the route table", method, path)
				}
			}
		}
	}
}

// What the gateway answers itself (errors, metadata) matches the document.
func TestGatewayAnswersMatchTheOpenAPIDocument(t *testing.T) {
	e := newEnv(t)
	e.vars["ORDERS_URL"] = ""
	e.vars["UNAUTH_RATE_LIMIT_PER_MINUTE"] = "3"
	g := e.start(nil, "")
	tok := e.id.token(t, tokenOpts{})
	noMenuScope := e.id.token(t, tokenOpts{scopes: []string{"svc.restaurant.read", "svc.orders.read"}})
	check := func(method, path string, r response) {
		t.Helper()
		u, _ := url.Parse(path)
		apispec.ValidateResponse(t, method, u.Path, u.Query(), r.status, r.header, r.body)
	}
	for _, c := range []struct {
		method, path, token string
		status              int
	}{
		{"GET", "/v1/restaurants/" + restB + "/menus", tok, 404},
		{"GET", "/v1/restaurants/" + restA + "/menus", noMenuScope, 403},
		{"GET", "/v1/restaurants/" + restA + "/orders", tok, 503},
		{"GET", "/v1/restaurants/" + restA + "/payment-report?organization_id=nope", tok, 400},
		{"GET", "/.well-known/oauth-protected-resource", "", 200},
		{"GET", "/v1/openapi.json", "", 200},
		{"GET", "/v1/restaurants", "", 401},
		{"GET", "/v1/restaurants", "", 429},
	} {
		var r response
		r = g.do(t, c.method, c.path, c.token, nil)
		if r.status != c.status {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, r.status, c.status)
			continue
		}
		check(c.method, c.path, r)
	}
	big := g.oversized(t, "POST", "/v1/restaurants/"+restA+"/menus", tok)
	check("POST", "/v1/restaurants/"+restA+"/menus", big)
}
