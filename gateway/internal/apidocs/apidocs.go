// Package apidocs is the API reference page the gateway serves at /docs: a
// static HTML file that Redocly's build-docs renders from the OpenAPI document
// of each menu naming set, with Redoc's scripts inlined. The pages are build
// output, not source: make apidocs (which make build, make test and the image
// builds run first) renders them into pages/, and they are compiled in. The
// page makes no request: its Content-Security-Policy allows nothing to be
// fetched, so a browser refuses any request it would make.
package apidocs

import (
	"embed"

	"partnerapi.dev/gateway/internal/routes"
)

// ContentSecurityPolicy allows the page's inline scripts and styles, inline
// images and fonts and Redoc's search worker, and nothing from any address.
const ContentSecurityPolicy = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; " +
	"img-src data:; font-src data:; worker-src blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// pages holds a.html and b.html once rendered, beside the README that keeps
// the folder in git.
//
//go:embed pages
var pages embed.FS

// Page is the reference page of naming set ns, or false when this binary
// was built without rendering the pages first (a bare go build).
func Page(ns routes.NamingSet) (string, bool) {
	name := "pages/a.html"
	if ns == routes.NamingB {
		name = "pages/b.html"
	}
	b, err := pages.ReadFile(name)
	return string(b), err == nil && len(b) > 0
}
