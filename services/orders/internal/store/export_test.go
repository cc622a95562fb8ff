package store

import "testing"

// SetFlushBytes changes how much COPY data a bulk load gathers, for one test.
func SetFlushBytes(t testing.TB, n int) {
	old := flushBytes
	flushBytes = n
	t.Cleanup(func() { flushBytes = old })
}
