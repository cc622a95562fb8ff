package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestUsageAndArgumentErrors(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), nil, &out); err != nil || !strings.Contains(out.String(), "partnerctl token") {
		t.Fatalf("usage: %v %q", err, out.String())
	}
	if err := run(context.Background(), []string{"clients"}, &out); err == nil {
		t.Fatal("missing subcommand accepted")
	}
	t.Setenv("ADMIN_TOKEN", "")
	if err := run(context.Background(), []string{"clients", "list"}, &out); err == nil || !strings.Contains(err.Error(), "ADMIN_TOKEN") {
		t.Fatalf("missing token: %v", err)
	}
	if err := run(context.Background(), []string{"token", "--email", "x"}, &out); err == nil {
		t.Fatal("token without password accepted")
	}
	if err := run(context.Background(), []string{"authorize", "--email", "x", "--password", "y"}, &out); err == nil {
		t.Fatal("authorize without a URL accepted")
	}
}
