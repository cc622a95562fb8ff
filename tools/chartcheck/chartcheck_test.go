package chartcheck

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// processes are the binaries deployed by the umbrella chart; services have a database.
var processes = []struct {
	name       string
	hasMigrate bool
}{
	{"gateway", false},
	{"identity", true},
	{"orders", true},
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

type renderCase struct {
	name      string
	chart     string   // directory under charts/
	values    []string // values files relative to the repository root
	umbrella  bool
	wantHook  string // helm.sh/hook of every migration Job
	wantProcs []string
}

func renderCases() []renderCase {
	var cases []renderCase
	for _, p := range processes {
		var procs []string
		procs = append(procs, p.name)
		cases = append(cases, renderCase{
			name: p.name + "/defaults", chart: p.name, wantHook: "pre-install,pre-upgrade", wantProcs: procs,
		})
	}
	all := []string{"gateway", "identity", "orders"}
	cases = append(cases,
		renderCase{name: "umbrella/defaults", chart: "restaurant-partner-api", umbrella: true, wantHook: "pre-install,pre-upgrade", wantProcs: all},
		renderCase{name: "umbrella/dev", chart: "restaurant-partner-api", values: []string{"deploy/dev/values.yaml"}, umbrella: true, wantHook: "post-install,pre-upgrade", wantProcs: all},
		renderCase{name: "umbrella/staging", chart: "restaurant-partner-api", values: []string{"deploy/staging/values.yaml"}, umbrella: true, wantHook: "pre-install,pre-upgrade", wantProcs: all},
		renderCase{name: "umbrella/prod", chart: "restaurant-partner-api", values: []string{"deploy/prod/values.yaml"}, umbrella: true, wantHook: "pre-install,pre-upgrade", wantProcs: all},
	)
	return cases
}

func render(t *testing.T, root string, tc renderCase) *Release {
	t.Helper()
	c, err := LoadChart(filepath.Join(root, "charts", tc.chart))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, v := range tc.values {
		files = append(files, filepath.Join(root, v))
	}
	vals, err := ReadValueFiles(files...)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := Render(c, vals, "rpa", "partner-api")
	if err != nil {
		t.Fatalf("helm template %s %v failed:\n%v", tc.chart, tc.values, err)
	}
	if len(rel.Objects) == 0 {
		t.Fatalf("helm template %s %v rendered nothing", tc.chart, tc.values)
	}
	return rel
}

func report(t *testing.T, check string, problems []string) {
	t.Helper()
	if len(problems) > 0 {
		t.Errorf("%s: %d problem(s):\n  %s", check, len(problems), strings.Join(problems, "\n  "))
	}
}

func TestChartsRender(t *testing.T) {
	root := repoRoot(t)
	for _, tc := range renderCases() {
		t.Run(tc.name, func(t *testing.T) {
			rel := render(t, root, tc)
			report(t, "labels", CheckLabels(rel))
			report(t, "workloads", CheckWorkloads(rel))
			report(t, "selectors", CheckSelectors(rel, tc.umbrella))
			report(t, "references", CheckReferences(rel))
			report(t, "names", CheckNames(rel))
			report(t, "service accounts", CheckServiceAccounts(rel))

			kinds := map[string]bool{}
			for _, o := range rel.Objects {
				kinds[o.GVK.Kind+"/"+o.Labels["app.kubernetes.io/name"]] = true
			}
			for _, p := range tc.wantProcs {
				for _, k := range []string{"Deployment", "Service", "ServiceAccount", "ConfigMap", "NetworkPolicy"} {
					if !kinds[k+"/"+p] {
						t.Errorf("%s: no %s for %s", tc.name, k, p)
					}
				}
			}

			jobs := MigrationJobs(rel)
			for _, p := range processes {
				if !slices.Contains(tc.wantProcs, p.name) {
					continue
				}
				job, ok := jobs[p.name]
				switch {
				case !p.hasMigrate && ok:
					t.Errorf("%s has a migration Job %s but no database", p.name, job.Object.ID())
				case p.hasMigrate && !ok:
					t.Errorf("%s has no migration Job (a batch/v1 Job labelled app.kubernetes.io/component=migration)", p.name)
				case p.hasMigrate:
					if job.Hook != tc.wantHook {
						t.Errorf("%s: helm.sh/hook is %q, want %q", job.Object.ID(), job.Hook, tc.wantHook)
					}
					if !slices.Equal(job.Args, []string{"migrate"}) {
						t.Errorf("%s: container args are %q, want [migrate]", job.Object.ID(), job.Args)
					}
					if job.Object.Annotations["helm.sh/hook-delete-policy"] == "" {
						t.Errorf("%s: no helm.sh/hook-delete-policy: old Jobs would block the next upgrade", job.Object.ID())
					}
				}
			}
		})
	}
}

func TestUmbrellaWiresGatewayUpstreams(t *testing.T) {
	root := repoRoot(t)
	for _, tc := range renderCases() {
		if !tc.umbrella {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			rel := render(t, root, tc)
			report(t, "gateway upstreams", CheckUpstreams(rel, "rpa-gateway", "IDENTITY_URL", "ORDERS_URL"))
		})
	}
}

// TestStrictDecodingRejectsUnknownFields guards the guard: a typo in a template must fail.
func TestStrictDecodingRejectsUnknownFields(t *testing.T) {
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: {}\ndatta: {}\n"
	if _, err := decodeStrict(strictDecoder(), "test.yaml", doc); err == nil {
		t.Fatal("a ConfigMap with an unknown field decoded without error")
	}
	ok := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  A: b\n"
	o, err := decodeStrict(strictDecoder(), "test.yaml", ok)
	if err != nil {
		t.Fatal(err)
	}
	if o.Obj.(*corev1.ConfigMap).Data["A"] != "b" {
		t.Fatalf("decoded %#v", o.Obj)
	}
}
