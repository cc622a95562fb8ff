package chartcheck

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	"sigs.k8s.io/yaml"
)

// renderMonitoring renders the umbrella chart's monitoring objects with every
// monitoring value on, on a cluster that serves the given API versions.
func renderMonitoring(t *testing.T, root string, apis ...string) map[string]map[string]any {
	t.Helper()
	c, err := LoadChart(filepath.Join(root, "charts", "restaurant-partner-api"))
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]any{"monitoring": map[string]any{
		"serviceMonitor": map[string]any{"enabled": true, "labels": map[string]any{"release": "kube-prometheus-stack"}},
		"prometheusRule": map[string]any{"enabled": true},
		"dashboard":      map[string]any{"enabled": true},
	}}
	if err := chartutil.ProcessDependenciesWithMerge(c, vals); err != nil {
		t.Fatal(err)
	}
	caps := ClusterCapabilities()
	caps.APIVersions = append(slices.Clone(caps.APIVersions), apis...)
	rv, err := chartutil.ToRenderValues(c, vals, chartutil.ReleaseOptions{Name: "rpa", Namespace: "partner-api", IsInstall: true}, caps)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.Render(c, rv)
	if err != nil {
		t.Fatal(err)
	}
	objs := map[string]map[string]any{}
	for _, doc := range releaseutil.SplitManifests(out["restaurant-partner-api/templates/monitoring.yaml"]) {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("%v:\n%s", err, doc)
		}
		if o != nil {
			objs[o["kind"].(string)] = o
		}
	}
	return objs
}

// The ServiceMonitor and PrometheusRule appear only where the cluster serves
// their CRDs; the rule is files/alerts.yaml (the file promtool tests) as it
// is; the dashboard is files/dashboard.json; every metric the alerts and the
// dashboard read is one docs/operations.md lists.
func TestMonitoringObjects(t *testing.T) {
	root := repoRoot(t)
	if objs := renderMonitoring(t, root); len(objs) != 1 || objs["ConfigMap"] == nil {
		t.Fatalf("without the Prometheus Operator's CRDs: %v", slices.Collect(maps.Keys(objs)))
	}
	objs := renderMonitoring(t, root, "monitoring.coreos.com/v1/ServiceMonitor", "monitoring.coreos.com/v1/PrometheusRule")
	sm, rule, dash := objs["ServiceMonitor"], objs["PrometheusRule"], objs["ConfigMap"]
	if sm == nil || rule == nil || dash == nil {
		t.Fatalf("with the CRDs: %v", slices.Collect(maps.Keys(objs)))
	}
	smJSON, _ := json.Marshal(sm)
	if !strings.Contains(string(smJSON), `"port":"internal"`) || !strings.Contains(string(smJSON), `"release":"kube-prometheus-stack"`) {
		t.Errorf("ServiceMonitor %s", smJSON)
	}

	raw, err := os.ReadFile(filepath.Join(root, "charts/restaurant-partner-api/files/alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var alerts map[string]any
	if err := yaml.Unmarshal(raw, &alerts); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rule["spec"], alerts) {
		t.Errorf("the PrometheusRule's spec is not files/alerts.yaml")
	}
	board, err := os.ReadFile(filepath.Join(root, "charts/restaurant-partner-api/files/dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	if data := dash["data"].(map[string]any); data["partner-api.json"] != string(board) || dash["metadata"].(map[string]any)["labels"].(map[string]any)["grafana_dashboard"] != "1" {
		t.Errorf("dashboard ConfigMap %v", dash["metadata"])
	}

	ops, err := os.ReadFile(filepath.Join(root, "docs/operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	metric := regexp.MustCompile(`\b(http_server_duration_milliseconds|dependency_ready|outbox_\w+|gateway_ratelimit_\w+|webhook_\w+)\b`)
	for _, name := range slices.Compact(slices.Sorted(slices.Values(metric.FindAllString(string(raw)+string(board), -1)))) {
		doc := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_count"), "_total")
		if !strings.Contains(string(ops), "`"+doc) {
			t.Errorf("the alerts or the dashboard read %s, which docs/operations.md does not list", name)
		}
	}
	for _, a := range regexp.MustCompile(`alert: (\w+)`).FindAllStringSubmatch(string(raw), -1) {
		if !strings.Contains(string(ops), "### "+a[1]) {
			t.Errorf("alert %s has no runbook section in docs/operations.md", a[1])
		}
	}
}
