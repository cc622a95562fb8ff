package main

import (
	"bytes"
	"context"
	"io"
	"os"
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

// TestHelpAndFlagErrorsNeverPrintSecrets: the admin token, a password and a
// client secret taken from the environment appear in no help text and no
// flag error.
func TestHelpAndFlagErrorsNeverPrintSecrets(t *testing.T) {
	secrets := map[string]string{"ADMIN_TOKEN": "admin-sentinel-7f3a", "DEMO_PASSWORD": "password-sentinel-91c2", "CLIENT_SECRET": "secret-sentinel-55d0"}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	for _, args := range [][]string{
		{"clients", "list", "-h"}, {"clients", "list", "--bogus"}, {"clients", "register", "--approve=maybe"},
		{"grants", "list", "-help"}, {"token", "-h"}, {"token", "--bogus"}, {"authorize", "-h"}, {"authorize", "--bogus"},
	} {
		var out bytes.Buffer
		stderr := captureStderr(t, func() { _ = run(context.Background(), args, &out) })
		for _, v := range secrets {
			if strings.Contains(out.String()+stderr, v) {
				t.Errorf("%v printed a secret from the environment:\n%s%s", args, out.String(), stderr)
			}
		}
		if !strings.Contains(stderr, "-") {
			t.Errorf("%v printed no usage: %q", args, stderr)
		}
	}
}

// captureStderr returns what f writes to os.Stderr (where flag errors go).
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	f()
	os.Stderr = old
	_ = w.Close()
	return <-done
}
