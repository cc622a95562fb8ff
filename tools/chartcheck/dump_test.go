package chartcheck

import (
	"os"
	"path/filepath"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
)

// TestDump prints a rendered chart for a person to read; it runs only with DUMP_CHART
// (a directory under charts/) and optionally DUMP_VALUES (a values file from the repository root).
func TestDump(t *testing.T) {
	if os.Getenv("DUMP_CHART") == "" {
		t.Skip()
	}
	root := repoRoot(t)
	c, err := LoadChart(filepath.Join(root, "charts", os.Getenv("DUMP_CHART")))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	if f := os.Getenv("DUMP_VALUES"); f != "" {
		files = append(files, filepath.Join(root, f))
	}
	vals, _ := ReadValueFiles(files...)
	_ = chartutil.ProcessDependenciesWithMerge(c, vals)
	rv, err := chartutil.ToRenderValues(c, vals, chartutil.ReleaseOptions{Name: "rpa", Namespace: "partner-api"}, ClusterCapabilities())
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.Render(c, rv)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range out {
		t.Logf("# %s\n%s", k, v)
	}
}
