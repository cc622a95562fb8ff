package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// builtRoot is where Built keeps its directories, under the checkout.
const builtRoot = ".cache/testbin"

// builtKeep is how long Built keeps the directories of earlier stamps: a run
// still using one is done long before.
const builtKeep = time.Hour

// Built is a directory of binaries that build fills once for every test
// process of a run, when the run has a sources stamp (SourcesEnv, set by
// make's test targets): in the checkout's .cache/testbin/<stamp>/<name>,
// built by the first test package that asks while the others wait on a file
// lock. The stamp changes with any source, so the binaries are never older
// than the code. Without a stamp (go test alone) it is SharedDir: once per
// test binary. The test's cached result depends on the stamp (Sources).
func Built(t testing.TB, name string, build func(dir string) error) string {
	t.Helper()
	Sources(t)
	stamp := os.Getenv(SourcesEnv)
	root, ok := checkout()
	if stamp == "" || !ok || strings.ContainsAny(stamp, `/\.`) {
		return SharedDir(t, name, build)
	}
	base := filepath.Join(root, builtRoot)
	dir := filepath.Join(base, stamp, name)
	if err := builtOnce(base, stamp, dir, build); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return dir
}

// builtOnce builds dir under an exclusive lock on its stamp, unless an
// earlier process did; a build that failed leaves nothing behind.
func builtOnce(base, stamp, dir string, build func(dir string) error) error {
	if err := os.MkdirAll(filepath.Join(base, stamp), 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(base, stamp+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing unlocks too
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	pruneBuilt(base, stamp)
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".building-")
	if err != nil {
		return err
	}
	if err := build(tmp); err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	return os.Rename(tmp, dir)
}

// pruneBuilt removes the directories of other stamps older than builtKeep.
func pruneBuilt(base, stamp string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".lock")
		if name == stamp {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > builtKeep {
			_ = os.RemoveAll(filepath.Join(base, e.Name()))
		}
	}
}

// checkout is the repository's root: the nearest folder above the working
// directory that holds go.work.
func checkout() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
