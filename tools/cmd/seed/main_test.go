package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestProgressOnlyOnATerminal: with stderr a pipe (a log), seed writes no
// carriage returns, only one final line per part.
func TestProgressOnlyOnATerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	got := make(chan string)
	go func() { b, _ := io.ReadAll(r); got <- string(b) }()
	err = run(context.Background(), []string{"--orders-out", filepath.Join(t.TempDir(), "orders.ndjson")})
	os.Stderr = stderr
	w.Close()
	out := <-got
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "\r") {
		t.Errorf("stderr is not a terminal, yet seed wrote carriage returns: %q", out)
	}
	if !regexp.MustCompile(`^seed: orders (\d+)/(\d+) loaded in \S+\n$`).MatchString(out) {
		t.Errorf("want one final line, got %q", out)
	}
}
