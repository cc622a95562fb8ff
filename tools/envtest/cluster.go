package envtest

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Versions of the node components built beside kube-apiserver and etcd for a local
// single-node cluster. The Kubernetes components share KubernetesVersion (and so the Go
// build cache of the kube-apiserver build).
const (
	// CoreDNSVersion is the github.com/coredns/coredns module version, built with only the
	// plugins a cluster's DNS needs (CoreDNSPlugins).
	CoreDNSVersion = "v1.14.7"
	// HelmVersion is the helm.sh/helm/v3 module version of the helm command.
	HelmVersion = "v3.22.0"
	// KubeRouterVersion is the github.com/cloudnativelabs/kube-router/v2 module version, run
	// as the local node's NetworkPolicy enforcer (firewall only). The module proxy serves no
	// newer release; this one has reported security flaws, which is acceptable only because
	// it runs inside the throwaway local test node and is never shipped or installed by the
	// charts.
	KubeRouterVersion = "v2.1.0"
)

// Node components, by binary name.
const (
	Kubelet               = "kubelet"
	KubeControllerManager = "kube-controller-manager"
	KubeScheduler         = "kube-scheduler"
	KubeProxy             = "kube-proxy"
	Kubectl               = "kubectl"
	CoreDNS               = "coredns"
	Helm                  = "helm"
	KubeRouter            = "kube-router"
)

// kubernetesComponents are built from k8s.io/kubernetes/cmd/<name>.
var kubernetesComponents = []string{Kubelet, KubeControllerManager, KubeScheduler, KubeProxy, Kubectl}

// ClusterComponents are every binary ClusterBinaries provides besides kube-apiserver and etcd.
var ClusterComponents = append(append([]string{}, kubernetesComponents...), CoreDNS, Helm, KubeRouter)

// CoreDNSPlugins are CoreDNS's plugins in the build, in CoreDNS's execution order: no
// forwarder, the cluster answers only for its own names.
var CoreDNSPlugins = []string{"errors", "log", "health", "ready", "cache", "loadbalance", "kubernetes"}

// ClusterCacheDir is the directory holding the node components of these versions, next
// to the kube-apiserver and etcd of CacheDir.
func ClusterCacheDir() (string, error) {
	dir, err := CacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(dir), "cluster-k8s-"+KubernetesVersion+"-coredns-"+CoreDNSVersion+"-helm-"+HelmVersion+"-kube-router-"+KubeRouterVersion), nil
}

// ClusterCached reports whether every node component is already built.
func ClusterCached() bool {
	dir, err := ClusterCacheDir()
	if err != nil {
		return false
	}
	for _, b := range ClusterComponents {
		if !executable(filepath.Join(dir, b)) {
			return false
		}
	}
	return true
}

// ClusterBinaries returns the directory holding the node components, building whichever
// is missing first, under a lock as Binaries does (the Kubernetes ones take minutes each on
// a cold Go build cache, much less after kube-apiserver was built).
func ClusterBinaries(ctx context.Context, log io.Writer) (string, error) {
	if log == nil {
		log = os.Stderr
	}
	dir, err := ClusterCacheDir()
	if err != nil {
		return "", err
	}
	if ClusterCached() {
		return dir, nil
	}
	err = buildMissing(ctx, dir, log, ClusterComponents, func(ctx context.Context, name, target string, log io.Writer) error {
		switch name {
		case CoreDNS:
			return buildCoreDNS(ctx, target, log)
		case Helm:
			return buildHelm(ctx, target, log)
		case KubeRouter:
			return buildKubeRouter(ctx, target, log)
		}
		return buildKubernetesCommand(ctx, name, target, log)
	})
	return dir, err
}

// kubernetesLdflags stamp the version the components report (kubelet registers its node
// with it; kubectl and the API server compare them).
func kubernetesLdflags() string {
	minor := strings.Split(strings.TrimPrefix(KubernetesVersion, "v"), ".")[1]
	return "-X k8s.io/component-base/version.gitVersion=" + KubernetesVersion +
		" -X k8s.io/component-base/version.gitMajor=1" +
		" -X k8s.io/component-base/version.gitMinor=" + minor
}

// buildKubernetesCommand builds k8s.io/kubernetes/cmd/<name> in the same throwaway module
// as kube-apiserver (KubeAPIServerGoMod), so the builds share modules and build cache.
func buildKubernetesCommand(ctx context.Context, name, target string, log io.Writer) error {
	staging, err := kubernetesStagingModules(ctx, log)
	if err != nil {
		return err
	}
	gomod, err := execTemplate(KubeAPIServerGoMod, map[string]any{
		"Kubernetes": KubernetesVersion, "StagingVersion": StagingVersion, "Staging": staging,
	})
	if err != nil {
		return err
	}
	pkg := "k8s.io/kubernetes/cmd/" + name
	return BuildInTempModule(ctx, target, log, map[string]string{
		"go.mod":   gomod,
		"tools.go": "//go:build tools\n\npackage tools\n\nimport _ \"" + pkg + "\"\n",
	}, pkg, kubernetesLdflags())
}

// CoreDNSGoMod is the go.mod of the throwaway module CoreDNS is built in.
const CoreDNSGoMod = `module partnerapi.dev/envtest/coredns

go 1.26.0

require github.com/coredns/coredns {{.CoreDNS}}
`

// coreDNSMain is CoreDNS's own main with its plugin list cut down to CoreDNSPlugins.
const coreDNSMain = `// Command coredns is CoreDNS with only the plugins a cluster's DNS needs.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"
{{- range .Plugins}}
	_ "github.com/coredns/coredns/plugin/{{.}}"
{{- end}}
)

func init() {
	dnsserver.Directives = []string{ {{- range $i, $p := .Plugins}}{{if $i}}, {{end}}"{{$p}}"{{end -}} }
}

func main() { coremain.Run() }
`

func buildCoreDNS(ctx context.Context, target string, log io.Writer) error {
	gomod, err := execTemplate(CoreDNSGoMod, map[string]string{"CoreDNS": CoreDNSVersion})
	if err != nil {
		return err
	}
	main, err := execTemplate(coreDNSMain, map[string]any{"Plugins": CoreDNSPlugins})
	if err != nil {
		return err
	}
	return BuildInTempModule(ctx, target, log, map[string]string{"go.mod": gomod, "main.go": main}, ".", "")
}

// HelmGoMod is the go.mod of the throwaway module helm is built in.
const HelmGoMod = `module partnerapi.dev/envtest/helm

go 1.26.0

require helm.sh/helm/v3 {{.Helm}}
`

// buildHelm builds the helm command with the ldflags of helm's own Makefile: without the
// Kubernetes version, `helm template` assumes v1.20 and refuses charts needing newer.
func buildHelm(ctx context.Context, target string, log io.Writer) error {
	gomod, err := execTemplate(HelmGoMod, map[string]string{"Helm": HelmVersion})
	if err != nil {
		return err
	}
	minor := strings.Split(strings.TrimPrefix(KubernetesVersion, "v"), ".")[1]
	ldflags := "-X helm.sh/helm/v3/internal/version.version=" + HelmVersion +
		" -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1" +
		" -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=" + minor
	return BuildInTempModule(ctx, target, log, map[string]string{
		"go.mod":   gomod,
		"tools.go": "//go:build tools\n\npackage tools\n\nimport _ \"helm.sh/helm/v3/cmd/helm\"\n",
	}, "helm.sh/helm/v3/cmd/helm", ldflags)
}

// KubeRouterGoMod is the go.mod of the throwaway module kube-router is built in (its own
// client-go, so it shares no build cache with the Kubernetes components).
const KubeRouterGoMod = `module partnerapi.dev/envtest/kube-router

go 1.26.0

require github.com/cloudnativelabs/kube-router/v2 {{.KubeRouter}}
`

func buildKubeRouter(ctx context.Context, target string, log io.Writer) error {
	gomod, err := execTemplate(KubeRouterGoMod, map[string]string{"KubeRouter": KubeRouterVersion})
	if err != nil {
		return err
	}
	pkg := "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router"
	return BuildInTempModule(ctx, target, log, map[string]string{
		"go.mod":   gomod,
		"tools.go": "//go:build tools\n\npackage tools\n\nimport _ \"" + pkg + "\"\n",
	}, pkg, "-X github.com/cloudnativelabs/kube-router/v2/pkg/version.Version="+KubeRouterVersion)
}
