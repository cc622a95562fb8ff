package repocheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// datedHeading is a heading that names the day of a run.
var datedHeading = regexp.MustCompile(`^#+ .*\b20\d\d-[01]\d-[0-3]\d\b`)

// LogOfRuns is the one document that keeps dated measurements.
const LogOfRuns = "performance.md"

// TestDocsKeepDatedRunsInOneLog: a service doc is a reference of what is true
// now; dated benchmark runs go to the log in docs/performance.md.
func TestDocsKeepDatedRunsInOneLog(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs found: %v", err)
	}
	for _, path := range docs {
		if filepath.Base(path) == LogOfRuns {
			continue
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(raw), "\n") {
			if datedHeading.MatchString(line) {
				t.Errorf("docs/%s:%d: %q is a dated run; move it to the log of runs in docs/%s", filepath.Base(path), i+1, line, LogOfRuns)
			}
		}
	}
}
