//go:build !unix

package envtest

import (
	"context"
	"io"
)

// LockFile is a no-op where flock is not available: concurrent first builds then
// both build, and the atomic rename keeps the cache consistent.
func LockFile(context.Context, string, io.Writer) (func(), error) { return func() {}, nil }
