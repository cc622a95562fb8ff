// Package chartcheck renders the Helm charts under charts/ with the Helm Go SDK and
// checks the result the way a careful reviewer would: values match values.schema.json,
// every manifest decodes strictly into a typed Kubernetes object, and the objects agree
// with each other (selectors, Secret and ConfigMap references, hook ordering) and with
// the project's rules (probes, resources, non-root, read-only root filesystem, labels).
//
// It needs no cluster, no helm binary and no network: file:// dependencies of the
// umbrella chart are loaded from their directories in memory, so a stale vendored
// charts/*.tgz never hides a change.
package chartcheck

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// RepoRoot walks up from dir to the directory holding go.work and charts/.
func RepoRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if isFile(filepath.Join(dir, "go.work")) && isDir(filepath.Join(dir, "charts")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no directory with go.work and charts/ above the working directory")
		}
		dir = parent
	}
}

func isFile(p string) bool { st, err := os.Stat(p); return err == nil && st.Mode().IsRegular() }
func isDir(p string) bool  { st, err := os.Stat(p); return err == nil && st.IsDir() }

// LoadChart loads the chart in dir and, recursively, every dependency whose repository
// is "file://<path>", replacing whatever `helm dependency build` vendored into charts/.
// Any other repository is an error: the checks never reach the network.
func LoadChart(dir string) (*chart.Chart, error) {
	c, err := loader.LoadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("load chart %s: %w", dir, err)
	}
	if len(c.Metadata.Dependencies) == 0 {
		return c, nil
	}
	var deps []*chart.Chart
	for _, d := range c.Metadata.Dependencies {
		rel, ok := strings.CutPrefix(d.Repository, "file://")
		if !ok {
			return nil, fmt.Errorf("chart %s: dependency %q has repository %q; only file:// dependencies can be checked offline", c.Name(), d.Name, d.Repository)
		}
		sub, err := LoadChart(filepath.Join(dir, rel))
		if err != nil {
			return nil, fmt.Errorf("chart %s: dependency %q: %w", c.Name(), d.Name, err)
		}
		if sub.Name() != d.Name {
			return nil, fmt.Errorf("chart %s: dependency %q points at %s, whose chart is named %q", c.Name(), d.Name, d.Repository, sub.Name())
		}
		if d.Version != "" {
			constraint, err := semver.NewConstraint(d.Version)
			if err != nil {
				return nil, fmt.Errorf("chart %s: dependency %q: bad version constraint %q: %w", c.Name(), d.Name, d.Version, err)
			}
			v, err := semver.NewVersion(sub.Metadata.Version)
			if err != nil || !constraint.Check(v) {
				return nil, fmt.Errorf("chart %s: dependency %q wants version %q, chart has %q", c.Name(), d.Name, d.Version, sub.Metadata.Version)
			}
		}
		deps = append(deps, sub)
	}
	c.SetDependencies(deps...)
	return c, nil
}

// MinKubeVersion is the oldest Kubernetes the charts support (their kubeVersion),
// used as .Capabilities.KubeVersion when rendering.
const MinKubeVersion = "v1.30.0"

// ClusterCapabilities are the SDK's default capabilities on a MinKubeVersion cluster.
func ClusterCapabilities() *chartutil.Capabilities {
	caps := *chartutil.DefaultCapabilities
	caps.KubeVersion = chartutil.KubeVersion{Version: MinKubeVersion, Major: "1", Minor: "30"}
	return &caps
}

// Release is the outcome of rendering a chart as `helm install` would.
type Release struct {
	Name      string
	Namespace string
	// Values are the coalesced values the templates saw (.Values).
	Values map[string]any
	// Objects are the rendered manifests in a stable order (template path, then name).
	Objects []*Object
	// Notes is the rendered NOTES.txt of the top chart, if any.
	Notes string
}

// Object is one rendered manifest, strictly decoded.
type Object struct {
	// Source is the template that produced it, e.g. "restaurant-partner-api/charts/identity/templates/process.yaml".
	Source string
	GVK    schema.GroupVersionKind
	Obj    runtime.Object
	Name   string
	Labels map[string]string
	// Annotations of the object's metadata.
	Annotations map[string]string
	// Manifest is the rendered YAML document, as Helm would send it.
	Manifest string
}

// ID names the object in failure messages.
func (o *Object) ID() string { return fmt.Sprintf("%s/%s (%s)", o.GVK.Kind, o.Name, o.Source) }

// HookEvents returns the helm.sh/hook events of the object, nil for a release resource.
func (o *Object) HookEvents() []string {
	h := o.Annotations["helm.sh/hook"]
	if h == "" {
		return nil
	}
	var out []string
	for _, e := range strings.Split(h, ",") {
		out = append(out, strings.TrimSpace(e))
	}
	return out
}

// HasHook reports whether the object is a hook for event.
func (o *Object) HasHook(event string) bool {
	for _, e := range o.HookEvents() {
		if e == event {
			return true
		}
	}
	return false
}

// ReadValueFiles reads and merges values files left to right, like repeated -f flags.
func ReadValueFiles(files ...string) (map[string]any, error) {
	merged := map[string]any{}
	for _, f := range files {
		v, err := chartutil.ReadValuesFile(f)
		if err != nil {
			return nil, fmt.Errorf("read values %s: %w", f, err)
		}
		merged = mergeMaps(merged, v.AsMap())
	}
	return merged, nil
}

// mergeMaps is helm's CLI merge of values files: maps merge, everything else replaces.
func mergeMaps(a, b map[string]any) map[string]any {
	out := maps.Clone(a)
	for k, v := range b {
		if vm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = mergeMaps(am, vm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// Render renders c with user values as `helm install <release> -n <namespace>` would:
// dependency conditions and import-values, kubeVersion compatibility, JSON Schema
// validation of the values (top chart and every subchart), template rendering, and a
// strict decode of every manifest. Every problem found is returned, joined.
func Render(c *chart.Chart, userValues map[string]any, releaseName, namespace string) (*Release, error) {
	caps := ClusterCapabilities()
	if kv := c.Metadata.KubeVersion; kv != "" && !chartutil.IsCompatibleRange(kv, caps.KubeVersion.String()) {
		return nil, fmt.Errorf("chart %s requires kubeVersion %q, rendering for %s", c.Name(), kv, caps.KubeVersion.String())
	}
	if err := chartutil.ProcessDependenciesWithMerge(c, userValues); err != nil {
		return nil, fmt.Errorf("process dependencies: %w", err)
	}
	opts := chartutil.ReleaseOptions{Name: releaseName, Namespace: namespace, Revision: 1, IsInstall: true}
	vals, err := chartutil.ToRenderValues(c, userValues, opts, caps)
	if err != nil {
		return nil, err // includes the JSON Schema validation errors
	}
	files, err := engine.Render(c, vals)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	rel := &Release{Name: releaseName, Namespace: namespace}
	if v, ok := vals["Values"].(chartutil.Values); ok {
		rel.Values = v.AsMap()
	}
	decoder := strictDecoder()
	var errs []error
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		content := files[p]
		if strings.HasSuffix(p, "NOTES.txt") {
			if p == c.Name()+"/templates/NOTES.txt" {
				rel.Notes = content
			}
			continue
		}
		docs := releaseutil.SplitManifests(content)
		keys := make([]string, 0, len(docs))
		for k := range docs {
			keys = append(keys, k)
		}
		sort.Sort(releaseutil.BySplitManifestsOrder(keys))
		for _, k := range keys {
			doc := docs[k]
			if strings.TrimSpace(doc) == "" {
				continue
			}
			obj, err := decodeStrict(decoder, p, doc)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			rel.Objects = append(rel.Objects, obj)
		}
	}
	return rel, errors.Join(errs...)
}

func strictDecoder() runtime.Decoder {
	codecs := serializer.NewCodecFactory(clientgoscheme.Scheme, serializer.EnableStrict)
	return codecs.UniversalDeserializer()
}

func decodeStrict(decoder runtime.Decoder, source, doc string) (*Object, error) {
	obj, gvk, err := decoder.Decode([]byte(doc), nil, nil)
	if err != nil {
		// A strict decoding error still returns the object; we fail on it anyway:
		// an unknown or duplicated field is silently dropped by the API server.
		return nil, fmt.Errorf("%s: manifest does not decode strictly into a Kubernetes type: %w\n---\n%s", source, err, doc)
	}
	var meta struct {
		Metadata struct {
			Name        string            `json:"name"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
		return nil, fmt.Errorf("%s: read metadata: %w", source, err)
	}
	return &Object{
		Source:      source,
		GVK:         *gvk,
		Obj:         obj,
		Name:        meta.Metadata.Name,
		Labels:      meta.Metadata.Labels,
		Annotations: meta.Metadata.Annotations,
		Manifest:    doc,
	}, nil
}
