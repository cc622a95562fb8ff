package chartcheck

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"helm.sh/helm/v3/pkg/chart"

	"partnerapi.dev/tools/registry"
)

// LibraryChart holds the templates every process chart renders (charts/common).
const LibraryChart = "common"

// TestChartsFollowRegistry holds the charts to the process registry: the umbrella
// installs exactly the registered processes, each from its own chart; each chart's
// image, secret keys and migration Job are the ones its process declares; the gateway
// chart has a URL for every upstream and each chart a URL for every process it calls; each chart renders through the library chart.
func TestChartsFollowRegistry(t *testing.T) {
	root := repoRoot(t)
	umbrella, err := LoadChart(filepath.Join(root, registry.UmbrellaChart))
	if err != nil {
		t.Fatal(err)
	}
	var deps, want []string
	for _, d := range umbrella.Metadata.Dependencies {
		deps = append(deps, d.Name)
		if d.Repository != "file://../"+d.Name {
			t.Errorf("umbrella dependency %s: repository %q, want file://../%s", d.Name, d.Repository, d.Name)
		}
		if d.Condition != d.Name+".enabled" {
			t.Errorf("umbrella dependency %s: condition %q, want %s.enabled", d.Name, d.Condition, d.Name)
		}
	}
	for _, p := range processes {
		want = append(want, p.Name)
	}
	slices.Sort(deps)
	slices.Sort(want)
	if !slices.Equal(deps, want) {
		t.Errorf("the umbrella chart depends on %v, the registered processes are %v", deps, want)
	}

	for _, p := range processes {
		t.Run(p.Name, func(t *testing.T) {
			c, err := LoadChart(filepath.Join(root, p.ChartDir()))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(c.Metadata.Dependencies, func(d *chart.Dependency) bool {
				return d.Name == LibraryChart && d.Repository == "file://../"+LibraryChart
			}) {
				t.Errorf("chart %s does not depend on the library chart (%s, file://../%s)", c.Name(), LibraryChart, LibraryChart)
			}
			v := c.Values
			if got := dig(v, "image", "repository"); got != p.Image() {
				t.Errorf("image.repository %v, want %s", got, p.Image())
			}
			keys, _ := dig(v, "secret", "keys").([]any)
			for _, k := range p.ChartSecretKeys() {
				if !slices.Contains(keys, any(k)) {
					t.Errorf("secret.keys %v lacks %s, which the process needs", keys, k)
				}
			}
			if slices.Contains(keys, any(registry.InternalContextKeys)) {
				t.Errorf("secret.keys lists %s, which global.internalContext provides", registry.InternalContextKeys)
			}
			if _, has := v["migration"]; has != p.Database {
				t.Errorf("values have a migration block: %v; the process has a database: %v", has, p.Database)
			}
			for _, callee := range registry.System().Callees(p) {
				wantURL := fmt.Sprintf("http://{{ .Release.Name }}-%s:8080", callee.Name)
				if got := dig(v, "config", callee.Upstream.URLEnv); got != wantURL {
					t.Errorf("config.%s = %v, want %s: the process calls %s", callee.Upstream.URLEnv, got, wantURL, callee.Name)
				}
			}
			for _, q := range processes {
				if slices.Contains(q.Calls, p.Name) || slices.Contains(q.Asks, p.Name) {
					callers, _ := dig(v, "networkPolicy", "callers").([]any)
					if !slices.Contains(callers, any(q.Name)) {
						t.Errorf("networkPolicy.callers %v lacks %s, which calls %s: its NetworkPolicy would refuse it", callers, q.Name, p.Name)
					}
				}
			}
			if p.Gateway {
				for _, u := range registry.System().Upstreams() {
					wantURL := fmt.Sprintf("http://{{ .Release.Name }}-%s:8080", u.Name)
					if got := dig(v, "config", u.Upstream.URLEnv); got != wantURL {
						t.Errorf("config.%s = %v, want %s", u.Upstream.URLEnv, got, wantURL)
					}
				}
			}
		})
	}
}

// dig follows keys through nested maps; nil when one is missing.
func dig(v map[string]any, keys ...string) any {
	var cur any = v
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}
