package chartcheck

import (
	"fmt"
	"os"
	"regexp"

	"sigs.k8s.io/yaml"
)

// SkaffoldConfig is the subset of the skaffold.yaml schema (skaffold/v4beta*) this
// repository uses. ParseSkaffold decodes strictly, so a field outside this subset is
// reported: extend the struct when the file grows.
type SkaffoldConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Build  SkaffoldBuild `json:"build"`
	Deploy struct {
		Helm struct {
			Releases []HelmRelease `json:"releases"`
		} `json:"helm"`
	} `json:"deploy"`
	PortForward []struct {
		ResourceType string `json:"resourceType"`
		ResourceName string `json:"resourceName"`
		Namespace    string `json:"namespace"`
		Port         int    `json:"port"`
		LocalPort    int    `json:"localPort"`
	} `json:"portForward,omitempty"`
	Profiles []SkaffoldProfile `json:"profiles"`
}

// SkaffoldProfile is one profiles entry.
type SkaffoldProfile struct {
	Name       string `json:"name"`
	Activation []struct {
		Command string `json:"command,omitempty"`
	} `json:"activation,omitempty"`
	// Build, when set, takes the place of the top-level build.
	Build   *SkaffoldBuild `json:"build,omitempty"`
	Patches []struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	} `json:"patches"`
}

// SkaffoldBuild is a build section (the top level's or a profile's).
type SkaffoldBuild struct {
	TagPolicy map[string]any `json:"tagPolicy,omitempty"`
	Local     struct {
		UseBuildkit bool  `json:"useBuildkit,omitempty"`
		Push        *bool `json:"push,omitempty"`
		Concurrency int   `json:"concurrency,omitempty"`
	} `json:"local"`
	Artifacts []SkaffoldArtifact `json:"artifacts"`
}

// SkaffoldArtifact is one build.artifacts entry.
type SkaffoldArtifact struct {
	Image   string `json:"image"`
	Context string `json:"context"`
	// Hooks run on the machine before the build (the gateway's make apidocs).
	Hooks *struct {
		Before []struct {
			Command []string `json:"command"`
		} `json:"before"`
	} `json:"hooks,omitempty"`
	Docker *struct {
		Dockerfile string            `json:"dockerfile"`
		BuildArgs  map[string]string `json:"buildArgs,omitempty"`
	} `json:"docker,omitempty"`
	Custom *struct {
		BuildCommand string `json:"buildCommand"`
		Dependencies struct {
			Paths  []string `json:"paths"`
			Ignore []string `json:"ignore,omitempty"`
		} `json:"dependencies"`
	} `json:"custom,omitempty"`
}

// HelmRelease is one deploy.helm.releases entry.
type HelmRelease struct {
	Name              string            `json:"name"`
	ChartPath         string            `json:"chartPath"`
	Namespace         string            `json:"namespace"`
	CreateNamespace   bool              `json:"createNamespace,omitempty"`
	ValuesFiles       []string          `json:"valuesFiles"`
	SetValueTemplates map[string]string `json:"setValueTemplates"`
}

// ParseSkaffold reads skaffold.yaml strictly.
func ParseSkaffold(path string) (*SkaffoldConfig, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cfg SkaffoldConfig
	if err := yaml.UnmarshalStrict(raw, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &cfg, nil
}

var nonWord = regexp.MustCompile(`[^A-Za-z0-9]`)

// ImageTemplateKey is the suffix skaffold gives an artifact in setValueTemplates
// variables: IMAGE_REPO_<key>, IMAGE_TAG_<key>.
func ImageTemplateKey(image string) string { return nonWord.ReplaceAllString(image, "_") }
