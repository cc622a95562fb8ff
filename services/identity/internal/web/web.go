// Package web holds the sign-in, consent and connected-apps pages: server-rendered
// templates and one small stylesheet, embedded in the binary.
package web

import (
	"embed"
	"html/template"
)

//go:embed templates/*.html static/*.css
var files embed.FS

// Templates are the parsed pages: "signin", "consent", "error" and the
// connected-apps pages "account", "account_revoke" and "account_error".
var Templates = template.Must(template.ParseFS(files, "templates/*.html"))

// CSS is the stylesheet, inlined into every page (no extra request, and a
// strict Content-Security-Policy can still allow it by hash if wanted).
var CSS = func() template.CSS {
	b, err := files.ReadFile("static/style.css")
	if err != nil {
		panic(err)
	}
	return template.CSS(b) //nolint:gosec // our own embedded file
}()
