package testenv

import (
	"os"
	"testing"
)

// SourcesEnv names the stamp of the repository's sources that make's test
// targets set (devstack env): a hash of every file's path, size and time.
const SourcesEnv = "PARTNERAPI_SOURCES"

// Sources makes the test's cached result depend on the stamp in SourcesEnv:
// a test that builds another module's binaries and runs them runs again
// when any source of the repository changes. go test's cache sees the
// variable, but not what a go build the test starts reads, nor a file
// outside the test's module.
func Sources(t testing.TB) {
	t.Helper()
	_ = os.Getenv(SourcesEnv)
}
