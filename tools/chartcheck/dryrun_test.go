package chartcheck

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"partnerapi.dev/tools/envtest"
)

// TestServerSideDryRun sends every rendered manifest (hooks included) of every chart and
// environment to a real kube-apiserver as a server-side dry-run create, with strict field
// validation, into a namespace that warns on the "restricted" Pod Security Standard.
// It catches what only the API server knows: validation of names, label values,
// quantities, selectors against templates, HPA/PDB/NetworkPolicy rules, defaulting
// conflicts, and (as warnings, treated as failures) deprecated APIs and Pod Security
// violations. kube-apiserver and etcd are built from the Go module proxy on first use
// (several minutes) and cached outside the repository; see tools/envtest.
func TestServerSideDryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("server-side dry-run needs kube-apiserver and etcd (built on first use); skipped with -short")
	}
	c, warnings := startAPIServer(t)
	root := repoRoot(t)
	for _, tc := range renderCases() {
		t.Run(tc.name, func(t *testing.T) {
			rel := render(t, root, tc)
			ensureNamespace(t, c, rel.Namespace)
			problems := dryRun(t.Context(), c, warnings, rel)
			for _, problem := range problems {
				t.Errorf("chart %s (%s): %s", tc.chart, tc.name, problem)
			}
			t.Logf("%d objects sent, %d rejected or warned about", len(rel.Objects), len(problems))
		})
	}

	// The CRDs a chart ships in crds/ (Helm installs them before the templates).
	t.Run("crds", func(t *testing.T) {
		var objs []*Object
		for _, p := range processes {
			files, _ := filepath.Glob(filepath.Join(root, p.ChartDir(), "crds", "*.yaml"))
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				objs = append(objs, &Object{Source: f, GVK: schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"},
					Name: filepath.Base(f), Manifest: string(b)})
			}
		}
		for _, problem := range dryRun(t.Context(), c, warnings, &Release{Namespace: "partner-api", Objects: objs}) {
			t.Error(problem)
		}
		t.Logf("%d CRDs sent", len(objs))
	})

	// Guard the guard: objects that decode strictly into their types but that the API
	// server rejects must fail the dry-run.
	t.Run("rejects", func(t *testing.T) {
		ensureNamespace(t, c, "partner-api")
		meta := "metadata:\n  name: %s\n"
		for _, bad := range []struct{ name, doc, want string }{
			{"invalid label value", "apiVersion: v1\nkind: ConfigMap\n" + fmt.Sprintf(meta, "cm") + "  labels:\n    app.kubernetes.io/version: \"1.0 beta\"\n", "Invalid value"},
			{"selector does not match the template", "apiVersion: apps/v1\nkind: Deployment\n" + fmt.Sprintf(meta, "web") +
				"spec:\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: other}\n    spec:\n      containers:\n      - {name: web, image: web:1}\n",
				"selector` does not match template `labels`"},
			{"PDB with minAvailable and maxUnavailable", "apiVersion: policy/v1\nkind: PodDisruptionBudget\n" + fmt.Sprintf(meta, "pdb") +
				"spec:\n  minAvailable: 1\n  maxUnavailable: 1\n  selector:\n    matchLabels: {app: web}\n", "minAvailable and maxUnavailable cannot be both set"},
			{"HPA with minReplicas above maxReplicas", "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\n" + fmt.Sprintf(meta, "hpa") +
				"spec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 5\n  maxReplicas: 2\n", "must be greater than or equal to `minReplicas`"},
			{"pod that breaks the restricted Pod Security Standard", "apiVersion: apps/v1\nkind: Deployment\n" + fmt.Sprintf(meta, "root") +
				"spec:\n  selector:\n    matchLabels: {app: root}\n  template:\n    metadata:\n      labels: {app: root}\n    spec:\n      containers:\n      - {name: root, image: root:1}\n",
				"violate PodSecurity"},
		} {
			o, err := decodeStrict(strictDecoder(), bad.name, bad.doc)
			if err != nil {
				t.Fatalf("%s: %v", bad.name, err)
			}
			problems := dryRun(t.Context(), c, warnings, &Release{Namespace: "partner-api", Objects: []*Object{o}})
			if len(problems) == 0 || !strings.Contains(strings.Join(problems, "\n"), bad.want) {
				t.Errorf("%s: want a dry-run problem containing %q, got %q", bad.name, bad.want, problems)
			}
		}
	})
}

// startAPIServer starts etcd and kube-apiserver with envtest and returns an admin
// client whose API warnings are collected by the returned collector.
func startAPIServer(t *testing.T) (client.Client, *warningCollector) {
	t.Helper()
	ctx := t.Context()
	if dl, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-30*time.Second))
		defer cancel()
	}
	start := time.Now()
	cached := envtest.Cached()
	if !cached {
		cacheDir, _ := envtest.CacheDir()
		t.Logf("building kube-apiserver %s and etcd %s from the Go module proxy into %s: first run only, takes several minutes (progress on stderr); "+
			"`cd tools && GOWORK=off go run ./envtest/cmd/envtest-binaries` builds them ahead of time",
			envtest.KubernetesVersion, envtest.EtcdVersion, cacheDir)
	}
	dir, err := envtest.Binaries(ctx, os.Stderr)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("building the envtest binaries did not finish before the test timeout (raise -timeout or pre-build them with `cd tools && GOWORK=off go run ./envtest/cmd/envtest-binaries`): %v", err)
		}
		t.Fatalf("envtest binaries: %v", err)
	}
	if !cached {
		t.Logf("built kube-apiserver and etcd in %s", time.Since(start).Round(time.Second))
	}

	start = time.Now()
	env := &crenvtest.Environment{BinaryAssetsDirectory: dir}
	// Our binaries, even when KUBEBUILDER_ASSETS points elsewhere.
	env.ControlPlane.GetAPIServer().Path = filepath.Join(dir, envtest.KubeAPIServer)
	env.ControlPlane.Etcd = &crenvtest.Etcd{Path: filepath.Join(dir, envtest.Etcd)}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start kube-apiserver %s and etcd %s from %s: %v", envtest.KubernetesVersion, envtest.EtcdVersion, dir, err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop envtest: %v", err)
		}
	})
	t.Logf("kube-apiserver %s and etcd %s (%s) up in %s", envtest.KubernetesVersion, envtest.EtcdVersion, dir, time.Since(start).Round(100*time.Millisecond))
	warnings := &warningCollector{}
	cfg.WarningHandlerWithContext = warnings
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c, warnings
}

// ensureNamespace creates namespace ns (for real: a dry-run object needs an existing
// namespace), warning on pods that break the restricted Pod Security Standard.
func ensureNamespace(t *testing.T, c client.Client, ns string) {
	t.Helper()
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{
		"pod-security.kubernetes.io/warn":            "restricted",
		"pod-security.kubernetes.io/warn-version":    "latest",
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
	}}}
	if err := c.Create(t.Context(), obj); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
}

// dryRun creates every object of rel with dryRun=All and fieldValidation=Strict and
// returns one problem per object the API server rejects or warns about. Objects are sent
// one at a time, as the rendered YAML (not the typed object), so the API server sees
// exactly what Helm would send.
func dryRun(ctx context.Context, c client.Client, warnings *warningCollector, rel *Release) []string {
	var problems []string
	for _, o := range rel.Objects {
		js, err := yaml.YAMLToJSON([]byte(o.Manifest))
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", o.ID(), err))
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", o.ID(), err))
			continue
		}
		namespaced, err := c.IsObjectNamespaced(u)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: the API server does not serve %s: %v", o.ID(), o.GVK, err))
			continue
		}
		if namespaced && u.GetNamespace() == "" {
			u.SetNamespace(rel.Namespace)
		}
		warnings.reset()
		err = c.Create(ctx, u, client.DryRunAll, client.FieldValidation(metav1.FieldValidationStrict))
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: the API server rejects it: %v", o.ID(), err))
		}
		for _, w := range warnings.take() {
			problems = append(problems, fmt.Sprintf("%s: the API server warns: %s", o.ID(), w))
		}
	}
	return problems
}

// warningCollector keeps the Warning headers of API responses (deprecated APIs, Pod
// Security violations of workload templates, ignored fields).
type warningCollector struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warningCollector) HandleWarningHeaderWithContext(_ context.Context, code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

func (w *warningCollector) reset() { w.mu.Lock(); w.msgs = nil; w.mu.Unlock() }

func (w *warningCollector) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.msgs
	w.msgs = nil
	return out
}
