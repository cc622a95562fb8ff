package testenv_test

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"partnerapi.dev/pkg/testenv"
)

func TestBuiltOncePerStampAcrossCallers(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.work"), []byte("go 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(root, "tools", "e2e")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(pkg)
	t.Setenv(testenv.SourcesEnv, "stamp1")
	var builds atomic.Int32
	build := func(dir string) error {
		builds.Add(1)
		return os.WriteFile(filepath.Join(dir, "tool"), []byte("built"), 0o755)
	}
	// Callers at once (each takes the lock on its own file descriptor, as
	// test processes do): one builds, the others wait and find its folder.
	// They report errors rather than fail the test off its goroutine.
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { errs[i] = testenv.BuiltOnce(root, "system", build) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(root, ".cache", "testbin", "stamp1", "system")
	if d := testenv.Built(t, "system", build); d != want {
		t.Fatalf("Built gave %s, want %s", d, want)
	}
	if n := builds.Load(); n != 1 {
		t.Fatalf("built %d times for one stamp", n)
	}
	if b, err := os.ReadFile(filepath.Join(want, "tool")); err != nil || string(b) != "built" {
		t.Fatalf("the built file: %q %v", b, err)
	}

	// Another stamp (a source changed) builds again.
	t.Setenv(testenv.SourcesEnv, "stamp2")
	if d := testenv.Built(t, "system", build); d == want || builds.Load() != 2 {
		t.Fatalf("a new stamp gave %s after %d builds", d, builds.Load())
	}
}

func TestBuiltFailureLeavesNothing(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.work"), []byte("go 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	broken := errors.New("does not compile")
	if err := testenv.BuiltOnce(root, "broken", func(dir string) error { return broken }); !errors.Is(err, broken) {
		t.Fatalf("BuiltOnce = %v", err)
	}
	entries, err := os.ReadDir(filepath.Join(root, ".cache", "testbin", "stamp1"))
	if err != nil || len(entries) != 0 {
		t.Fatalf("a failed build left %v (%v)", entries, err)
	}
}
