package apispec

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"partnerapi.dev/pkg/mdtable"
)

// pageToken is a response field that carries the next page's position.
var pageToken = regexp.MustCompile(`^next(After|Before|Cursor)$`)

// TestAPIDocPaginationTable holds docs/api.md's pagination table to the
// document: every page token a response carries is in the table.
func TestAPIDocPaginationTable(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("..", "..", "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	tables := mdtable.Under(string(md), "Pagination")
	if len(tables) == 0 || tables[0].Column("response") < 0 {
		t.Fatal(`docs/api.md: no table with a "response" column under "Pagination"`)
	}
	var documented []string
	for _, row := range tables[0].Rows {
		documented = append(documented, mdtable.Code(row[tables[0].Column("response")])...)
	}
	var doc any
	if err := json.Unmarshal(JSON(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, name := range propertyNames(doc) {
		if pageToken.MatchString(name) && !slices.Contains(documented, name) {
			t.Errorf("responses carry the page token %s, which the pagination table of docs/api.md does not name", name)
		}
	}
}

// propertyNames are the names of every schema property in v, sorted, once each.
func propertyNames(v any) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if props, ok := v["properties"].(map[string]any); ok {
				for name := range props {
					out = append(out, name)
				}
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(v)
	slices.Sort(out)
	return slices.Compact(out)
}

// TestFirstServerIsUsable: generated clients take the first server as their
// default base URL, so it must be a plain absolute URL, not a template.
func TestFirstServerIsUsable(t *testing.T) {
	doc, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Servers) == 0 {
		t.Fatal("the document names no server")
	}
	u, err := url.Parse(doc.Servers[0].URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(doc.Servers[0].URL, "{}") {
		t.Errorf("the first server %q is not a usable base URL (%v)", doc.Servers[0].URL, err)
	}
}
