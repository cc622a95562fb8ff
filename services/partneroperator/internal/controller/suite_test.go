package controller_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"partnerapi.dev/pkg/testenv"

	partnersv1alpha1 "partnerapi.dev/services/partneroperator/api/v1alpha1"
	"partnerapi.dev/services/partneroperator/internal/controller"
	"partnerapi.dev/services/partneroperator/internal/identityadmin"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const adminToken = "operator-test-admin-token-0123456789"

// startAPIServer starts etcd and kube-apiserver, with the PartnerClient CRD installed,
// from the binaries tools/envtest builds from the Go module proxy and caches outside the
// repository (`make envtest-binaries`; several minutes on first use, then instant). The
// tools module is run, not imported, so this module builds alone (as in its image). The
// test skips only when the binaries cannot be built.
func startAPIServer(t *testing.T) *rest.Config {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", "run", "./envtest/cmd/envtest-binaries")
	cmd.Dir = filepath.Join("..", "..", "..", "..", "tools")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("kube-apiserver and etcd could not be built by `cd tools && GOWORK=off go run ./envtest/cmd/envtest-binaries` (its output above says why): %v", err)
	}
	dir := strings.TrimSpace(string(out))
	env := &crenvtest.Environment{
		BinaryAssetsDirectory: dir,
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd")},
		ErrorIfCRDPathMissing: true,
	}
	// These binaries, even when KUBEBUILDER_ASSETS points elsewhere.
	env.ControlPlane.GetAPIServer().Path = filepath.Join(dir, "kube-apiserver")
	env.ControlPlane.Etcd = &crenvtest.Etcd{Path: filepath.Join(dir, "etcd")}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start kube-apiserver and etcd: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	return cfg
}

// identityProcess is a real identity binary on a real Postgres database.
type identityProcess struct {
	t        *testing.T
	bin      string
	env      []string
	adminURL string
	dbURL    string
	// publicURL is identity's public listener (the OAuth endpoints).
	publicURL string
	mu        sync.Mutex
	cmd       *exec.Cmd
	done      chan struct{}
}

// startIdentity builds services/identity/cmd/identity, migrates a fresh database and
// serves it on free ports.
func startIdentity(t *testing.T) *identityProcess {
	t.Helper()
	testenv.Sources(t)
	bin := filepath.Join(t.TempDir(), "identity")
	build := exec.Command("go", "build", "-o", bin, "./cmd/identity")
	build.Dir = filepath.Join("..", "..", "..", "identity")
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build identity: %v\n%s", err, out)
	}
	key := make([]byte, 32)
	ctxKey := make([]byte, 32)
	_, _ = rand.Read(key)
	_, _ = rand.Read(ctxKey)
	base := []string{
		"ADMIN_TOKEN=" + adminToken,
		"SIGNING_KEY_ENCRYPTION_KEY=" + base64.StdEncoding.EncodeToString(key),
		"INTERNAL_CONTEXT_KEYS=k1:" + base64.StdEncoding.EncodeToString(ctxKey),
		"OTEL_SDK_DISABLED=true",
	}
	migrate := func(ctx context.Context, url string) error {
		cmd := exec.CommandContext(ctx, bin, "migrate")
		cmd.Env = append(os.Environ(), append(base, "DATABASE_URL="+url)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("identity migrate: %w\n%s", err, out)
		}
		return nil
	}
	dbURL := testenv.NewDatabase(t, "identity", migrate)
	internal, public := testenv.FreeAddr(t), testenv.FreeAddr(t)
	p := &identityProcess{t: t, bin: bin, adminURL: "http://" + internal, dbURL: dbURL, publicURL: "http://" + public,
		env: append(base, "DATABASE_URL="+dbURL, "HTTP_ADDR="+public, "INTERNAL_HTTP_ADDR="+internal, "PUBLIC_BASE_URL=http://"+public)}
	p.Start()
	t.Cleanup(p.Stop)
	return p
}

// Start runs identity serve and waits until its internal listener is ready.
func (p *identityProcess) Start() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	cmd := exec.Command(p.bin, "serve")
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("start identity: %v", err)
	}
	p.cmd, p.done = cmd, make(chan struct{})
	go func(done chan struct{}) { _ = cmd.Wait(); close(done) }(p.done)
	for {
		select {
		case <-p.done:
			p.t.Fatal("identity exited while starting")
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := http.Get(p.adminURL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
}

// Stop ends identity and waits for it to exit.
func (p *identityProcess) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	p.cmd = nil
}

// startOperator runs the manager with the reconciler, as main does, against cfg.
func startOperator(t *testing.T, cfg *rest.Config, admin *identityadmin.API, resync time.Duration) client.Client {
	t.Helper()
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true)))
	scheme := testScheme(t)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&controller.PartnerClientReconciler{
		Client:        mgr.GetClient(),
		Identity:      admin,
		Recorder:      mgr.GetEventRecorder("partneroperator"),
		Resync:        resync,
		SecretOverlap: time.Hour,
	}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), partnersv1alpha1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	return scheme
}

// authenticates reports whether identity accepts secret for clientID (at the
// introspection endpoint, which authenticates the client first).
func (p *identityProcess) authenticates(t *testing.T, clientID, secret string) bool {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.publicURL+"/oauth2/introspect", strings.NewReader("token=none"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(clientID, secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
