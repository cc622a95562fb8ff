package routes

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"partnerapi.dev/pkg/mdtable"
	"partnerapi.dev/services/contracts"
)

// TestAPIDocScopeTables holds docs/api.md's scope tables to the route table:
// the scope table lists every scope of the API, and the operation table names
// every operation once, by its operationId, with exactly the scopes the
// gateway requires of it.
func TestAPIDocScopeTables(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	tables := mdtable.Under(string(doc), "Scopes")
	var scopeTable, opTable *mdtable.Table
	for i := range tables {
		switch {
		case tables[i].Column("scope") == 0:
			scopeTable = &tables[i]
		case tables[i].Column("operation") == 0:
			opTable = &tables[i]
		}
	}
	if scopeTable == nil || opTable == nil {
		t.Fatalf("docs/api.md, section Scopes: want a table with a first column \"scope\" and one with \"operation\", found %d tables", len(tables))
	}

	var listed []string
	for _, row := range scopeTable.Rows {
		listed = append(listed, mdtable.Code(row[0])...)
	}
	if want := contracts.ScopeNames(); !slices.Equal(listed, want) {
		t.Errorf("the scope table lists %v, the API's scopes are %v", listed, want)
	}

	documented := map[string][]string{}
	for _, row := range opTable.Rows {
		if len(row) < 2 {
			t.Errorf("operation table row %v: want operations and scopes", row)
			continue
		}
		var scopes []string
		for _, s := range mdtable.Code(row[1]) {
			scopes = append(scopes, "svc."+s)
		}
		slices.Sort(scopes)
		for _, id := range mdtable.Code(row[0]) {
			if _, twice := documented[id]; twice {
				t.Errorf("operation %s is in the operation table twice", id)
			}
			documented[id] = scopes
		}
	}
	checked := map[string]bool{}
	for _, ns := range []NamingSet{NamingA, NamingB} {
		for _, op := range Table(ns) {
			if checked[op.ID] {
				continue
			}
			checked[op.ID] = true
			got, ok := documented[op.ID]
			want := slices.Sorted(slices.Values(op.Scopes))
			switch {
			case !ok:
				t.Errorf("operation %s (%s %s) is missing from the operation table", op.ID, op.Method, op.Path)
			case !slices.Equal(got, want):
				t.Errorf("operation %s: the doc says scopes %s, the gateway requires %s", op.ID, strings.Join(got, " "), strings.Join(want, " "))
			}
		}
	}
	for id := range documented {
		if !slices.ContainsFunc(Table(NamingA), func(o Operation) bool { return o.ID == id }) {
			t.Errorf("the operation table names %s, which the gateway does not serve", id)
		}
	}
}
