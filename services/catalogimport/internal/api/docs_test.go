package api_test

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// The document of docs/catalog-import.md is the one the tests plan and
// apply: a change to either is a change to both.
func TestTheDocumentedExampleIsTheTestedOne(t *testing.T) {
	raw, err := os.ReadFile("../../../../docs/catalog-import.md")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- document: services/catalogimport/testdata/cafe.json -->\n```json\n"
	_, after, ok := strings.Cut(string(raw), marker)
	if !ok {
		t.Fatal("docs/catalog-import.md has no marked example document")
	}
	block, _, ok := strings.Cut(after, "\n```")
	if !ok {
		t.Fatal("the example document's block does not end")
	}
	var documented any
	if err := json.Unmarshal([]byte(block), &documented); err != nil {
		t.Fatalf("the documented example is not JSON: %v", err)
	}
	if !reflect.DeepEqual(documented, any(cafe(t))) {
		t.Fatal("docs/catalog-import.md and testdata/cafe.json hold different documents")
	}
}
