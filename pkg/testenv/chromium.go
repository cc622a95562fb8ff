package testenv

import (
	"os"
	osexec "os/exec"
	"testing"
)

// Chromium is the path of a headless-capable Chromium for browser tests. It
// skips the test when there is none, and fails it in CI (CI set), which must
// run the browser tests.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := osexec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed (apt-get install -y chromium); CI must run the browser tests")
	}
	t.Skip("chromium is not installed; install it with apt-get install -y chromium")
	return ""
}
