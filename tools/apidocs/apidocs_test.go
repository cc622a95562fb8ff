package apidocs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteRendersWhenItsInputsChange: Write renders pages into a checkout
// without them, leaves them alone while their inputs are the same, and
// renders again when a document changes or a page is missing.
func TestWriteRendersWhenItsInputsChange(t *testing.T) {
	root := t.TempDir()
	// The checkout's inputs besides the documents: the pinned CLI and this renderer.
	for _, in := range []string{RedoclyDir, source} {
		abs, err := filepath.Abs(filepath.Join("..", "..", in))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, in)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(root, in)); err != nil {
			t.Fatal(err)
		}
	}
	doc := func(title string) []byte {
		return []byte(`{"openapi":"3.1.0","info":{"title":"` + title + `","version":"1"},"paths":{}}`)
	}
	page := filepath.Join(root, Dir, "a.html")
	write := func(title string) []byte {
		t.Helper()
		if err := Write(t.Context(), root, []Page{{Spec: doc(title), File: "a.html"}}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if got := write("First"); !bytes.Contains(got, []byte("First")) || !bytes.Contains(got, []byte("<title>"+Title+"</title>")) {
		t.Fatalf("the page of the first document:\n%.300s", got)
	}
	// A page Write would not write: kept while the inputs are the same.
	if err := os.WriteFile(page, []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := write("First"); string(got) != "kept" {
		t.Fatal("same inputs: the page was rendered again")
	}
	if got := write("Second"); !bytes.Contains(got, []byte("Second")) {
		t.Fatalf("a changed document: the page was not rendered again:\n%.300s", got)
	}
	if err := os.Remove(page); err != nil {
		t.Fatal(err)
	}
	if got := write("Second"); !bytes.Contains(got, []byte("Second")) {
		t.Fatal("a missing page was not rendered again")
	}
}
