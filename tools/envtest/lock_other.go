//go:build !unix

package envtest

import (
	"context"
	"io"
)

// lockFile is a no-op where flock is not available: concurrent first builds then
// both build, and the atomic rename keeps the cache consistent.
func lockFile(context.Context, string, io.Writer) (func(), error) { return func() {}, nil }
