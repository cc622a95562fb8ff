package chartcheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"partnerapi.dev/pkg/mdtable"
)

// TestDeployDocFollowsCharts holds docs/deploy.md to the charts: its table of
// places names every chart directory, and its table of the Secrets to create
// has, for every chart with secret keys, the Secret deploy/staging names and
// every key the chart reads from it.
func TestDeployDocFollowsCharts(t *testing.T) {
	root := repoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)

	var charts []string
	entries, err := os.ReadDir(filepath.Join(root, "charts"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			charts = append(charts, "charts/"+e.Name())
		}
	}
	var listed []string
	for _, tb := range mdtable.Under(doc, "Deploying the Restaurant Partner API to Kubernetes") {
		if tb.Column("path") != 0 {
			continue
		}
		for _, row := range tb.Rows {
			for _, c := range mdtable.Code(row[0]) {
				if strings.HasPrefix(c, "charts/") {
					listed = append(listed, c)
				}
			}
		}
	}
	slices.Sort(listed)
	if !slices.Equal(listed, charts) {
		t.Errorf("docs/deploy.md lists the charts %v, charts/ holds %v", listed, charts)
	}

	var secrets *mdtable.Table
	for _, tb := range mdtable.Under(doc, "Secrets that must exist (staging, prod)") {
		if tb.Column("keys") >= 0 {
			secrets = &tb
			break
		}
	}
	if secrets == nil {
		t.Fatal(`docs/deploy.md: no table with a "keys" column under "Secrets that must exist (staging, prod)"`)
	}
	staging := map[string]any{}
	stagingRaw, err := os.ReadFile(filepath.Join(root, "deploy", "staging", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(stagingRaw, &staging); err != nil {
		t.Fatal(err)
	}
	keysCol := secrets.Column("keys")
	for _, p := range processes {
		c, err := LoadChart(filepath.Join(root, p.ChartDir()))
		if err != nil {
			t.Fatal(err)
		}
		keys, _ := dig(c.Values, "secret", "keys").([]any)
		if len(keys) == 0 {
			continue
		}
		ref := p.Name + ".secret.existingSecret"
		i := slices.IndexFunc(secrets.Rows, func(row []string) bool { return slices.Contains(mdtable.Code(row[0]), ref) })
		if i < 0 {
			t.Errorf("docs/deploy.md: the Secrets table has no row for %s (%s), whose chart reads %v", p.Name, ref, keys)
			continue
		}
		row := secrets.Rows[i]
		if want, _ := dig(staging, p.Name, "secret", "existingSecret").(string); mdtable.Code(row[0])[0] != want {
			t.Errorf("docs/deploy.md: %s names Secret %s, deploy/staging/values.yaml names %s", ref, mdtable.Code(row[0])[0], want)
		}
		documented := mdtable.Code(row[keysCol])
		for _, k := range keys {
			if !slices.Contains(documented, k.(string)) {
				t.Errorf("docs/deploy.md: Secret %s lacks key %s, which the %s chart reads", mdtable.Code(row[0])[0], k, p.Name)
			}
		}
	}
}
