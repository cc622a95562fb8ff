// Package npmci installs pinned npm packages: npm ci in a directory when its
// node_modules does not hold exactly what package-lock.json pins (npm's own
// cache makes a reinstall offline).
package npmci

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Install makes node_modules of the current directory match its
// package-lock.json, or fails t.
func Install(t testing.TB) {
	t.Helper()
	if err := Ensure("."); err != nil {
		t.Fatal(err)
	}
}

// Ensure makes dir/node_modules match dir/package-lock.json.
func Ensure(dir string) error {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s is needed (Node 20 or later; Debian: apt-get install nodejs npm): %w", tool, err)
		}
	}
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return err
	}
	sum := sha256.Sum256(lock)
	want := []byte(hex.EncodeToString(sum[:]))
	stamp := filepath.Join(dir, "node_modules", ".installed-from-lock")
	if got, err := os.ReadFile(stamp); err == nil && bytes.Equal(got, want) {
		return nil
	}
	cmd := exec.Command("npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm ci in %s: %w\n%s", dir, err, out)
	}
	return os.WriteFile(stamp, want, 0o600)
}
