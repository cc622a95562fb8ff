package store

import "testing"

// SetFlushBytes changes how much COPY data a bulk load gathers, for one test.
func SetFlushBytes(t testing.TB, n int) {
	old := flushBytes
	flushBytes = n
	t.Cleanup(func() { flushBytes = old })
}

// ObserveQueries makes fn see every search query and its arguments.
func ObserveQueries(s *Store, fn func(q string, args []any)) { s.observe = fn }
