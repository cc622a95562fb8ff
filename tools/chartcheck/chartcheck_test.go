package chartcheck

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"partnerapi.dev/tools/registry"
)

// processes are the binaries the umbrella chart deploys, from the process registry.
var processes = registry.Processes()

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
	wantProcs []string
}

func renderCases() []renderCase {
	var cases []renderCase
	// A process that needs Kubernetes (the operator) is off in the umbrella's defaults
	// and in dev, on in staging and prod.
	var all, byDefault []string
	for _, p := range processes {
		all = append(all, p.Name)
		if !p.Kubernetes {
			byDefault = append(byDefault, p.Name)
		}
		cases = append(cases, renderCase{
			name: p.Name + "/defaults", chart: p.Name, wantProcs: []string{p.Name},
		})
	}
	cases = append(cases,
		renderCase{name: "umbrella/defaults", chart: "restaurant-partner-api", umbrella: true, wantProcs: byDefault},
		renderCase{name: "umbrella/dev", chart: "restaurant-partner-api", values: []string{"deploy/dev/values.yaml"}, umbrella: true, wantProcs: byDefault},
		renderCase{name: "umbrella/staging", chart: "restaurant-partner-api", values: []string{"deploy/staging/values.yaml"}, umbrella: true, wantProcs: all},
		renderCase{name: "umbrella/prod", chart: "restaurant-partner-api", values: []string{"deploy/prod/values.yaml"}, umbrella: true, wantProcs: all},
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
			report(t, "internal listener", CheckInternalListener(rel))

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
			for _, p := range processes {
				if tc.umbrella && !slices.Contains(tc.wantProcs, p.Name) && kinds["Deployment/"+p.Name] {
					t.Errorf("%s: %s is deployed; it must be off here", tc.name, p.Name)
				}
			}
			for _, p := range tc.wantProcs {
				if find(rel, "Service", "rpa-"+p+InternalServiceSuffix) == nil {
					t.Errorf("%s: no Service rpa-%s%s for the internal listener", tc.name, p, InternalServiceSuffix)
				}
			}

			migrations := Migrations(rel)
			for _, p := range processes {
				if !slices.Contains(tc.wantProcs, p.Name) {
					continue
				}
				m, ok := migrations[p.Name]
				switch {
				case !p.Database && ok:
					t.Errorf("%s migrates (%s) but has no database", p.Name, m.Object.ID())
				case p.Database && !ok:
					t.Errorf("%s has no migration (an init container %q of its Deployment)", p.Name, MigrationContainer)
				case p.Database:
					if !slices.Equal(m.Container.Args, []string{"migrate"}) {
						t.Errorf("%s: migration args are %q, want [migrate]", m.Object.ID(), m.Container.Args)
					}
					if m.Container.Image != m.Process.Image || !equality.Semantic.DeepEqual(m.Container.Env, m.Process.Env) || !equality.Semantic.DeepEqual(m.Container.EnvFrom, m.Process.EnvFrom) {
						t.Errorf("%s: the migration must run the process's image with its environment", m.Object.ID())
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
			var keys []string
			for _, u := range registry.System().Upstreams() {
				keys = append(keys, u.Upstream.URLEnv)
			}
			report(t, "gateway upstreams", CheckUpstreams(rel, "rpa-"+registry.System().Gateway().Name, keys...))
			for _, p := range registry.Processes() {
				var called []string
				for _, c := range registry.System().Callees(p) {
					called = append(called, c.Upstream.URLEnv)
				}
				if len(called) > 0 {
					report(t, p.Name+" callees", CheckUpstreams(rel, "rpa-"+p.Name, called...))
				}
				for _, c := range registry.System().Callees(p) {
					report(t, p.Name+" admitted by "+c.Name, CheckAdmits(rel, "rpa-"+c.Name, p.Name))
				}
			}
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

func TestSkaffold(t *testing.T) {
	root := repoRoot(t)
	cfg, err := ParseSkaffold(filepath.Join(root, "skaffold.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cfg.APIVersion, "skaffold/v4") || cfg.Kind != "Config" {
		t.Errorf("apiVersion/kind = %s/%s, want skaffold/v4*/Config", cfg.APIVersion, cfg.Kind)
	}
	if len(cfg.Build.Artifacts) != len(processes) {
		t.Errorf("%d artifacts, want one per registered process (%d)", len(cfg.Build.Artifacts), len(processes))
	}
	if len(cfg.Deploy.Helm.Releases) != 1 {
		t.Fatalf("%d helm releases, want 1 (the umbrella chart)", len(cfg.Deploy.Helm.Releases))
	}
	rel := cfg.Deploy.Helm.Releases[0]
	if rel.ChartPath != registry.UmbrellaChart {
		t.Errorf("helm chartPath %q, want %s", rel.ChartPath, registry.UmbrellaChart)
	}
	checkDockerfile(t, filepath.Join(root, "Dockerfile"))
	for _, p := range processes {
		t.Run("artifact/"+p.Name, func(t *testing.T) {
			i := slices.IndexFunc(cfg.Build.Artifacts, func(a SkaffoldArtifact) bool { return a.Image == p.Image() })
			if i < 0 {
				t.Fatalf("no artifact builds image %s", p.Image())
			}
			a := cfg.Build.Artifacts[i]
			if a.Context != "." {
				t.Errorf("artifact %s: context %q, want \".\" (the Dockerfile needs pkg/ and services/contracts/)", a.Image, a.Context)
			}
			if a.Docker == nil || a.Docker.Dockerfile != "Dockerfile" {
				t.Fatalf("artifact %s: want docker.dockerfile Dockerfile, the one image recipe of every process", a.Image)
			}
			// The gateway compiles in its /docs pages, build output the
			// Dockerfile does not render: make apidocs runs first.
			var hooks [][]string
			if a.Hooks != nil {
				for _, h := range a.Hooks.Before {
					hooks = append(hooks, h.Command)
				}
			}
			if want := p.Name == "gateway"; want != slices.ContainsFunc(hooks, func(c []string) bool { return slices.Equal(c, []string{"make", "apidocs"}) }) || len(hooks) > 1 {
				t.Errorf("artifact %s: hooks.before %v, want [make apidocs] for the gateway only", a.Image, hooks)
			}
			wantArgs := map[string]string{"MODULE": p.Module, "PROCESS": p.Name}
			if !maps.Equal(a.Docker.BuildArgs, wantArgs) {
				t.Errorf("artifact %s: buildArgs %v, want %v (the registry's module and name)", a.Image, a.Docker.BuildArgs, wantArgs)
			}
			key := ImageTemplateKey(a.Image)
			for value, want := range map[string]string{
				p.Name + ".image.repository": "{{.IMAGE_REPO_" + key + "}}",
				p.Name + ".image.tag":        "{{.IMAGE_TAG_" + key + "}}",
			} {
				if got := rel.SetValueTemplates[value]; !strings.HasPrefix(got, want) {
					t.Errorf("setValueTemplates[%s] = %q, want it to start with %s", value, got, want)
				}
			}
		})
	}
	for _, env := range []string{"dev", "staging", "prod"} {
		t.Run("profile/"+env, func(t *testing.T) {
			want := "deploy/" + env + "/values.yaml"
			if !isFile(filepath.Join(root, want)) {
				t.Errorf("%s does not exist", want)
			}
			for _, p := range cfg.Profiles {
				if p.Name != env {
					continue
				}
				for _, patch := range p.Patches {
					if patch.Path == "/deploy/helm/releases/0/valuesFiles" {
						if got, ok := patch.Value.([]any); !ok || len(got) != 1 || got[0] != want {
							t.Errorf("profile %s sets valuesFiles to %v, want [%s]", env, patch.Value, want)
						}
						return
					}
				}
				t.Fatalf("profile %s does not patch /deploy/helm/releases/0/valuesFiles", env)
			}
			t.Fatalf("no skaffold profile %q", env)
		})
	}
	t.Run("profile/local", func(t *testing.T) { checkLocalProfile(t, root, cfg) })
}

// checkLocalProfile: the local cluster's profile builds every registered process with the
// custom build that imports into the node (no Docker, no registry), watching the module
// and the local modules it replaces, and installs the dev values with the local images.
func checkLocalProfile(t *testing.T, root string, cfg *SkaffoldConfig) {
	i := slices.IndexFunc(cfg.Profiles, func(p SkaffoldProfile) bool { return p.Name == "local" })
	if i < 0 {
		t.Fatal("no skaffold profile \"local\"")
	}
	p := cfg.Profiles[i]
	if p.Build == nil {
		t.Fatal("profile local has no build section")
	}
	if p.Build.Local.Push == nil || *p.Build.Local.Push {
		t.Error("profile local: want build.local.push: false (images go into the node, not to a registry)")
	}
	if len(p.Build.Artifacts) != len(processes) {
		t.Errorf("profile local: %d artifacts, want one per registered process (%d)", len(p.Build.Artifacts), len(processes))
	}
	const script = "tools/cluster/skaffold-build.sh"
	if !isFile(filepath.Join(root, script)) {
		t.Errorf("%s does not exist", script)
	}
	for _, proc := range processes {
		j := slices.IndexFunc(p.Build.Artifacts, func(a SkaffoldArtifact) bool { return a.Image == proc.Image() })
		if j < 0 {
			t.Errorf("profile local: no artifact builds image %s", proc.Image())
			continue
		}
		a := p.Build.Artifacts[j]
		if a.Context != "." || a.Custom == nil || a.Custom.BuildCommand != script+" "+proc.Name {
			t.Errorf("profile local, artifact %s: want context . and custom.buildCommand %q", a.Image, script+" "+proc.Name)
			continue
		}
		for _, dep := range []string{proc.Module, "pkg", "services/contracts"} {
			if !slices.Contains(a.Custom.Dependencies.Paths, dep) {
				t.Errorf("profile local, artifact %s: dependencies.paths %v lack %s", a.Image, a.Custom.Dependencies.Paths, dep)
			}
		}
	}
	want := []any{"deploy/dev/values.yaml", "tools/cluster/local-images.yaml"}
	for _, patch := range p.Patches {
		if patch.Path == "/deploy/helm/releases/0/valuesFiles" {
			if got, ok := patch.Value.([]any); !ok || !slices.Equal(got, want) {
				t.Errorf("profile local sets valuesFiles to %v, want %v", patch.Value, want)
			}
			return
		}
	}
	t.Error("profile local does not patch /deploy/helm/releases/0/valuesFiles")
}

// checkDockerfile: the build rules of the brief, as text (no docker daemon here). The
// process's module and command come in as build arguments.
func checkDockerfile(t *testing.T, path string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	for _, want := range []string{
		"FROM golang:1.26 AS build",
		"ARG MODULE",
		"ARG PROCESS",
		"GOWORK=off",
		"CGO_ENABLED=0",
		"COPY pkg/ pkg/",
		"COPY services/contracts/ services/contracts/",
		"COPY ${MODULE}/ ${MODULE}/",
		"-trimpath",
		`-ldflags="-s -w"`,
		`"./cmd/${PROCESS}"`,
		"FROM gcr.io/distroless/static-debian12:nonroot",
		"USER 65532",
		`ENTRYPOINT ["/process"]`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("%s does not contain %q", path, want)
		}
	}
	if strings.Contains(text, "GODEBUG") {
		t.Errorf("%s sets GODEBUG: images carry no runtime settings an operator would have to explain", path)
	}
}
