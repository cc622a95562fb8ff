package repocheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepositoryTracksNoBuildOutput holds the repository itself to the rule.
func TestRepositoryTracksNoBuildOutput(t *testing.T) {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git work tree: %v", err)
	}
	problems, err := TrackedProblems(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestPlantedFilesAreFound plants a binary and a large file in a scratch
// repository: a check that never fails protects nothing.
func TestPlantedFilesAreFound(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	self, err := os.Executable() // this test binary: a real ELF or Mach-O file
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), data, mode); err != nil {
			t.Fatal(err)
		}
	}
	write("tool", bin[:4096], 0o755)
	write("data.json", []byte(strings.Repeat("x", MaxTrackedSize+1)), 0o644)
	write("run.sh", []byte("#!/bin/sh\necho ok\n"), 0o755)
	write("README.md", []byte("# ok\n"), 0o644)
	git("add", ".")
	problems, err := TrackedProblems(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(problems, "\n")
	if len(problems) != 2 || !strings.Contains(got, "tool: a compiled binary") || !strings.Contains(got, "data.json: ") {
		t.Fatalf("want the binary and the large file reported, got:\n%s", got)
	}
}
