package main

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"partnerapi.dev/pkg/localinfra"
)

// TestOnPortFallsBack: a server starts on the port asked for while it is
// free, and on another when a server already holds it.
func TestOnPortFallsBack(t *testing.T) {
	ctx := context.Background()
	redis := func(port int) (*localinfra.Server, error) {
		return localinfra.StartRedis(ctx, localinfra.RedisOptions{Dir: t.TempDir(), Port: port})
	}
	port, err := localinfra.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	want := "127.0.0.1:" + strconv.Itoa(port) + "/"
	first, err := onPort(port, redis)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = first.Stop() }()
	if !strings.Contains(first.URL, want) {
		t.Fatalf("started at %s, want port %d", first.URL, port)
	}
	other, err := onPort(port, redis)
	if err != nil {
		t.Fatalf("start while port %d is held: %v", port, err)
	}
	defer func() { _ = other.Stop() }()
	if strings.Contains(other.URL, want) {
		t.Fatalf("start while port %d is held got it: %s", port, other.URL)
	}
}
