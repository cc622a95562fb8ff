package chartcheck

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"partnerapi.dev/tools/promtool"
)

// The chart's alert rules pass promtool's check, and each alert fires (and
// stays silent) as files/alerts_test.yaml says. promtool is built once from
// the Go module proxy (make test starts that build in the background).
func TestAlertRules(t *testing.T) {
	bin, err := promtool.Binary(context.Background(), os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(repoRoot(t), "charts/restaurant-partner-api/files")
	for _, args := range [][]string{{"check", "rules", "alerts.yaml"}, {"test", "rules", "alerts_test.yaml"}} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}
