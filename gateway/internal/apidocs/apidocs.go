// Package apidocs is the API reference page the gateway serves at /docs: a
// static HTML file that Redocly's build-docs renders from the OpenAPI document
// of each menu naming set, with Redoc's scripts inlined (page_*_gen.go,
// written by make gen). The page makes no request: its Content-Security-Policy
// allows nothing to be fetched, so a browser refuses any request it would make.
package apidocs

import "partnerapi.dev/gateway/internal/routes"

// ContentSecurityPolicy allows the page's inline scripts and styles, inline
// images and fonts and Redoc's search worker, and nothing from any address.
const ContentSecurityPolicy = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; " +
	"img-src data:; font-src data:; worker-src blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Page is the reference page of naming set ns.
func Page(ns routes.NamingSet) string {
	if ns == routes.NamingB {
		return pageB
	}
	return pageA
}
