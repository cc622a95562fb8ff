package apicheck

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/tools/apidocs"
)

// The generators a partner would use, pinned. The generate directive of
// tools/partnerclient names the same oapi-codegen version; the generated file
// carries it, so a mismatch makes TestPartnerClientIsFresh fail.
const (
	oapiCodegen = "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2"
	ogen        = "github.com/ogen-go/ogen/cmd/ogen@v1.24.0"
	ogenModule  = "github.com/ogen-go/ogen"
	ogenVersion = "v1.24.0"
	runtimeMod  = "github.com/oapi-codegen/runtime"
)

// servedDocuments are the documents the gateway serves, by naming set.
func servedDocuments() map[string][]byte {
	return map[string][]byte{"A": apispec.JSON(), "B": apispec.NamingSetB()}
}

func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func writeDocument(t *testing.T, dir, set string, doc []byte) string {
	t.Helper()
	path := filepath.Join(dir, "openapi-"+set+".json")
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

var goEnv = []string{"GOWORK=off", "GOFLAGS=-mod=mod"}

func oapiCodegenClient(t *testing.T, spec, out string) {
	t.Helper()
	run(t, filepath.Dir(out), goEnv, "go", "run", oapiCodegen, "-generate", "types,client", "-package", "partnerclient", "-o", out, spec)
}

func TestPartnerClientIsFresh(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "client.gen.go")
	oapiCodegenClient(t, writeDocument(t, dir, "A", apispec.JSON()), out)
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../partnerclient/client.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("tools/partnerclient/client.gen.go is not what oapi-codegen generates from the served document: run make partner-client")
	}
}

// Both generators turn every served document into a client that compiles.
// Each client is built in a module of its own, as a partner's would be.
func TestGeneratedClientsCompile(t *testing.T) {
	runtimeVersion := strings.TrimSpace(run(t, ".", []string{"GOWORK=off"}, "go", "list", "-m", "-f", "{{.Version}}", runtimeMod))
	for set, doc := range servedDocuments() {
		t.Run(set, func(t *testing.T) {
			mod := moduleDir(t, doc, runtimeVersion)
			spec := writeDocument(t, t.TempDir(), set, doc)
			gomod := fmt.Sprintf("module partnerapiclient\n\ngo 1.24\n\nrequire (\n\t%s %s\n\t%s %s\n)\n", runtimeMod, runtimeVersion, ogenModule, ogenVersion)
			if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(gomod), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(mod, "oapi"), 0o755); err != nil {
				t.Fatal(err)
			}
			oapiCodegenClient(t, spec, filepath.Join(mod, "oapi", "client.gen.go"))

			// A client only, as a partner generates it; the server half
			// would only lengthen the build.
			cfg := filepath.Join(mod, "ogen.yml")
			if err := os.WriteFile(cfg, []byte("generator:\n  features:\n    disable_all: true\n    enable: [paths/client, client/request/validation]\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			log := run(t, mod, goEnv, "go", "run", ogen, "-config", cfg, "-target", "ogen", "-package", "partnerclient", "-clean", spec)
			// ogen types a schema it cannot type precisely as any, and says so.
			for line := range strings.Lines(log) {
				if strings.Contains(line, "Type is not defined") {
					t.Errorf("ogen: %s", line)
				}
			}
			run(t, mod, goEnv, "go", "mod", "tidy")
			run(t, mod, goEnv, "go", "build", "./...")
		})
	}
}

// moduleDir is a folder under the user's cache named after what goes into
// it: the same document and tools land in the same folder, so the Go build
// cache answers a rerun.
func moduleDir(t *testing.T, doc []byte, runtimeVersion string) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s %s %s %s\n%s", oapiCodegen, ogen, runtimeVersion, ogenVersion, doc))
	dir := filepath.Join(base, "partnerapi", "apicheck", hex.EncodeToString(sum[:8]))
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Redocly's recommended rules, warnings included, pass on every served
// document (redocly.yaml: recommended-strict).
func TestRedoclyLintIsClean(t *testing.T) {
	cli := redocly(t)
	dir := t.TempDir()
	for set, doc := range servedDocuments() {
		spec := writeDocument(t, dir, set, doc)
		cmd := exec.CommandContext(t.Context(), "node", cli, "lint", "--config", "redocly/redocly.yaml", "--format", "stylish", spec)
		cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("naming set %s: redocly lint: %v\n%s", set, err, out)
		}
	}
}

// redocly installs the pinned CLI from redocly/package-lock.json (npm ci)
// unless node_modules already holds that lock's install, and returns the
// CLI's entry point.
func redocly(t *testing.T) string {
	t.Helper()
	cli, err := apidocs.CLI("redocly")
	if err != nil {
		t.Fatal(err)
	}
	return cli
}
