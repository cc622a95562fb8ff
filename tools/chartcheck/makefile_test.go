package chartcheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestChartDepsSaysHowToGetHelm: without helm on PATH, make chart-deps says
// how to get it instead of only "helm: command not found".
func TestChartDepsSaysHowToGetHelm(t *testing.T) {
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	// PATH with make, a shell and go, and no helm.
	bin := t.TempDir()
	for _, tool := range []string{makeBin, goBin} {
		if err := os.Symlink(tool, filepath.Join(bin, filepath.Base(tool))); err != nil {
			t.Fatal(err)
		}
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	path := bin + string(os.PathListSeparator) + filepath.Dir(sh)
	if _, err := os.Stat(filepath.Join(filepath.Dir(sh), "helm")); err == nil {
		t.Skipf("helm is in %s, beside sh: cannot leave it off PATH", filepath.Dir(sh))
	}
	cmd := exec.Command(makeBin, "--no-print-directory", "chart-deps")
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "PATH="+path)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("make chart-deps without helm succeeded:\n%s", out)
	}
	if !strings.Contains(string(out), "go install helm.sh/helm/v3/cmd/helm@v3.") {
		t.Errorf("make chart-deps without helm does not say how to get it:\n%s", out)
	}
}
