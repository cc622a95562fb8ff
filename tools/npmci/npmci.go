// Package npmci installs a test's pinned npm packages: npm ci in the
// current directory when node_modules does not hold exactly what
// package-lock.json pins (npm's own cache makes a reinstall offline).
package npmci

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Install makes node_modules match package-lock.json, or fails t.
func Install(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (Node 20 or later): %v", tool, err)
		}
	}
	lock, err := os.ReadFile("package-lock.json")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(lock)
	want := []byte(hex.EncodeToString(sum[:]))
	stamp := filepath.Join("node_modules", ".installed-from-lock")
	if got, err := os.ReadFile(stamp); err == nil && bytes.Equal(got, want) {
		return
	}
	cmd := exec.Command("npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci: %v\n%s", err, out)
	}
	if err := os.WriteFile(stamp, want, 0o600); err != nil {
		t.Fatal(err)
	}
}
