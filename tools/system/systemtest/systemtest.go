// Package systemtest gives tests the system's binaries.
package systemtest

import (
	"testing"

	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/tools/system"
)

// Binaries is the folder of system.Build's binaries, built once for every
// test package of a make test run (testenv.Built), else once per test
// binary. root is the repository's root folder, relative to the test's.
func Binaries(t testing.TB, root string) string {
	t.Helper()
	return testenv.Built(t, "system", func(dir string) error { return system.Build(root, dir) })
}
