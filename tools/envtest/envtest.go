// Package envtest builds, from the Go module proxy, the two binaries that
// sigs.k8s.io/controller-runtime/pkg/envtest needs (kube-apiserver and etcd) and caches
// them outside the repository, so tests can run a real API server without downloading
// release archives (setup-envtest needs a bucket that is not reachable everywhere).
//
// The binaries are built on first use, under a lock file so concurrent test binaries
// build them once, into
//
//	${XDG_CACHE_HOME:-$HOME/.cache}/partnerapi/envtest/k8s-<KubernetesVersion>-etcd-<EtcdVersion>/
//
// (or $PARTNERAPI_ENVTEST_CACHE/k8s-...-etcd-.../ when that is set). A cold build takes a
// few minutes (kube-apiserver is large); afterwards Binaries only checks that the files exist.
package envtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"
	"time"
)

const (
	// KubernetesVersion is the kube-apiserver built (k8s.io/kubernetes module version).
	KubernetesVersion = "v1.35.4"
	// StagingVersion is the version of the k8s.io/* staging modules matching KubernetesVersion.
	StagingVersion = "v0.35.4"
	// EtcdVersion is the etcd server built (go.etcd.io/etcd/server/v3 module version).
	EtcdVersion = "v3.6.16"
)

// Binary names, as envtest looks them up in its BinaryAssetsDirectory.
const (
	KubeAPIServer = "kube-apiserver"
	Etcd          = "etcd"
)

// CacheDir is the directory holding (or about to hold) the binaries of these versions.
func CacheDir() (string, error) {
	base := os.Getenv("PARTNERAPI_ENVTEST_CACHE")
	if base == "" {
		c := os.Getenv("XDG_CACHE_HOME")
		if c == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("envtest cache: no XDG_CACHE_HOME and no home directory: %w", err)
			}
			c = filepath.Join(home, ".cache")
		}
		base = filepath.Join(c, "partnerapi", "envtest")
	}
	return filepath.Join(base, "k8s-"+KubernetesVersion+"-etcd-"+EtcdVersion), nil
}

// Cached reports whether both binaries are already in CacheDir.
func Cached() bool {
	dir, err := CacheDir()
	return err == nil && executable(filepath.Join(dir, KubeAPIServer)) && executable(filepath.Join(dir, Etcd))
}

func executable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

// Binaries returns the directory holding kube-apiserver and etcd, building whichever is
// missing first (progress and timings go to log; nil means os.Stderr). The build needs
// the go command and the module proxy (GOPROXY), nothing else.
func Binaries(ctx context.Context, log io.Writer) (string, error) {
	if log == nil {
		log = os.Stderr
	}
	dir, err := CacheDir()
	if err != nil {
		return "", err
	}
	if Cached() {
		return dir, nil
	}
	err = buildMissing(ctx, dir, log, []string{Etcd, KubeAPIServer}, func(ctx context.Context, name, target string, log io.Writer) error {
		if name == Etcd {
			return buildEtcd(ctx, target, log)
		}
		return buildKubernetesCommand(ctx, "kube-apiserver", target, log)
	})
	return dir, err
}

// buildMissing builds into dir, under its lock file, each of names that is not an
// executable there yet (another process may have built it while we waited for the lock).
func buildMissing(ctx context.Context, dir string, log io.Writer, names []string, build func(ctx context.Context, name, target string, log io.Writer) error) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("envtest cache: %w", err)
	}
	unlock, err := LockFile(ctx, filepath.Join(dir, ".lock"), log)
	if err != nil {
		return err
	}
	defer unlock()
	for _, name := range names {
		target := filepath.Join(dir, name)
		if executable(target) {
			continue
		}
		start := time.Now()
		fmt.Fprintf(log, "envtest: building %s into %s (first use only; the Kubernetes components take minutes each)\n", name, dir)
		if err := build(ctx, name, target, log); err != nil {
			return fmt.Errorf("envtest: build %s: %w", name, err)
		}
		fmt.Fprintf(log, "envtest: built %s in %s\n", name, time.Since(start).Round(time.Second))
	}
	return nil
}

// KubeAPIServerGoMod is the go.mod of the throwaway module kube-apiserver is built in.
// k8s.io/kubernetes requires its staging modules (k8s.io/api, k8s.io/apiserver, ...) at
// v0.0.0 and replaces them with ./staging/src/...; those replaces do not apply to a
// dependency, so each staging module is replaced here by its published version.
const KubeAPIServerGoMod = `module partnerapi.dev/envtest/kube-apiserver

go 1.26.0

require k8s.io/kubernetes {{.Kubernetes}}

replace (
{{- range .Staging}}
	{{.}} => {{.}} {{$.StagingVersion}}
{{- end}}
)
`

// EtcdGoMod is the go.mod of the throwaway module etcd is built in. The server module's
// own replaces (../api, ../client/v3 ...) do not apply to a dependency; the sibling
// modules are pinned to the same release so they resolve from the proxy.
const EtcdGoMod = `module partnerapi.dev/envtest/etcd

go 1.26.0

require (
	go.etcd.io/etcd/server/v3 {{.Etcd}}
	go.etcd.io/etcd/api/v3 {{.Etcd}}
	go.etcd.io/etcd/client/pkg/v3 {{.Etcd}}
	go.etcd.io/etcd/client/v3 {{.Etcd}}
	go.etcd.io/etcd/pkg/v3 {{.Etcd}}
)
`

const etcdMain = `// Command etcd is the etcd server, built for envtest.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
`

func buildEtcd(ctx context.Context, target string, log io.Writer) error {
	gomod, err := execTemplate(EtcdGoMod, map[string]string{"Etcd": EtcdVersion})
	if err != nil {
		return err
	}
	return BuildInTempModule(ctx, target, log, map[string]string{
		"go.mod":  gomod,
		"main.go": etcdMain,
	}, ".", "")
}

var stagingReplace = regexp.MustCompile(`^\s*(?:replace\s+)?(k8s\.io/[^\s]+)\s+=>\s+\./staging/`)

// kubernetesStagingModules lists the staging modules from the replace block of
// k8s.io/kubernetes@KubernetesVersion's go.mod.
func kubernetesStagingModules(ctx context.Context, log io.Writer) ([]string, error) {
	tmp, err := os.MkdirTemp("", "envtest-k8s-mod-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out, err := goCmd(ctx, tmp, log, true, "mod", "download", "-json", "k8s.io/kubernetes@"+KubernetesVersion)
	if err != nil {
		return nil, err
	}
	var info struct{ GoMod, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return nil, fmt.Errorf("go mod download: %w", err)
	}
	if info.Error != "" || info.GoMod == "" {
		return nil, fmt.Errorf("go mod download k8s.io/kubernetes@%s: %s", KubernetesVersion, info.Error)
	}
	f, err := os.Open(info.GoMod)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var mods []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := stagingReplace.FindStringSubmatch(sc.Text()); m != nil {
			mods = append(mods, m[1])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(mods) == 0 {
		return nil, fmt.Errorf("%s: no ./staging replaces found", info.GoMod)
	}
	return mods, nil
}

// BuildInTempModule writes files into a temporary module, tidies it and builds pkg into
// target (atomically: a half-written binary is never left in the cache), through the
// Go module proxy: how every tool binary the tests run is built and cached by version.
func BuildInTempModule(ctx context.Context, target string, log io.Writer, files map[string]string, pkg, ldflags string) error {
	tmp, err := os.MkdirTemp("", "envtest-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	start := time.Now()
	if _, err := goCmd(ctx, tmp, log, false, "mod", "tidy"); err != nil {
		return err
	}
	fmt.Fprintf(log, "envtest:   go mod tidy %s\n", time.Since(start).Round(time.Second))
	out := filepath.Join(tmp, "out")
	args := []string{"build", "-trimpath", "-o", out}
	if ldflags != "" {
		args = append(args, "-ldflags", "-s -w "+ldflags)
	} else {
		args = append(args, "-ldflags", "-s -w")
	}
	args = append(args, pkg)
	if _, err := goCmd(ctx, tmp, log, false, args...); err != nil {
		return err
	}
	// Same filesystem as target, so the rename is atomic.
	staged := target + ".tmp"
	if err := copyFile(out, staged); err != nil {
		return err
	}
	return os.Rename(staged, target)
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// goCmd runs the go command in dir as a standalone module build: no workspace, module
// downloads allowed, no cgo. Its stderr goes to log; stdout is returned when capture is set.
func goCmd(ctx context.Context, dir string, log io.Writer, capture bool, args ...string) ([]byte, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, errors.New("the go command is not on PATH")
	}
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = io.MultiWriter(&stderr, prefixed(log))
	var stdout bytes.Buffer
	if capture {
		cmd.Stdout = &stdout
	} else {
		cmd.Stdout = prefixed(log)
	}
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go %s (in %s): %w\n%s", strings.Join(args, " "), dir, err, lastLines(stderr.String(), 30))
	}
	return stdout.Bytes(), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// prefixed forwards the go command's output with an "envtest:   " prefix per line, but
// drops the (many hundred) "go: downloading" lines, which say nothing useful.
func prefixed(w io.Writer) io.Writer { return &lineWriter{w: w} }

type lineWriter struct {
	w   io.Writer
	buf []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(l.buf[:i])
		l.buf = l.buf[i+1:]
		if !strings.HasPrefix(line, "go: downloading ") {
			fmt.Fprintf(l.w, "envtest:   %s\n", line)
		}
	}
}

func execTemplate(text string, data any) (string, error) {
	t, err := template.New("").Parse(text)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// ToolDir is where a tool built from the Go module proxy at version is cached:
// ${XDG_CACHE_HOME:-$HOME/.cache}/partnerapi/<name>/<version>.
func ToolDir(name, version string) (string, error) {
	c := os.Getenv("XDG_CACHE_HOME")
	if c == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("%s cache: no XDG_CACHE_HOME and no home directory: %w", name, err)
		}
		c = filepath.Join(home, ".cache")
	}
	return filepath.Join(c, "partnerapi", name, version), nil
}

// BuildTool returns dir/name, first building pkg in a throwaway module of files into it
// (under dir's lock, once; ldflags beside -s -w) when it is not there yet.
func BuildTool(ctx context.Context, dir, name string, log io.Writer, files map[string]string, pkg, ldflags string) (string, error) {
	if log == nil {
		log = os.Stderr
	}
	target := filepath.Join(dir, name)
	if executable(target) {
		return target, nil
	}
	err := buildMissing(ctx, dir, log, []string{name}, func(ctx context.Context, _, target string, log io.Writer) error {
		return BuildInTempModule(ctx, target, log, files, pkg, ldflags)
	})
	return target, err
}
