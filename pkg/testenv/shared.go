package testenv

import (
	"os"
	"sync"
	"testing"
)

// sharedDirs are the SharedDir directories by name.
var sharedDirs = map[string]*sharedDir{}

type sharedDir struct {
	once sync.Once
	dir  string
	err  error
}

// SharedDir is a directory that fill fills once per test binary, for every
// test that asks for name (the system's binaries, built once for all the
// tests that start it); Main removes it. A fill that failed fails every
// test that asks.
func SharedDir(t testing.TB, name string, fill func(dir string) error) string {
	t.Helper()
	mu.Lock()
	s, ok := sharedDirs[name]
	if !ok {
		s = &sharedDir{}
		sharedDirs[name] = s
	}
	mu.Unlock()
	s.once.Do(func() {
		if s.dir, s.err = os.MkdirTemp("", "partnerapi-"+name+"-"); s.err != nil {
			return
		}
		mu.Lock()
		tempDirs = append(tempDirs, s.dir)
		mu.Unlock()
		s.err = fill(s.dir)
	})
	if s.err != nil {
		t.Fatalf("%s: %v", name, s.err)
	}
	return s.dir
}
