package ociimage_test

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"partnerapi.dev/tools/ociimage"
)

// TestProcessImage builds a static binary, writes its image and reads the archive back
// as a container runtime would: the tag, the Dockerfile's entrypoint, command and user,
// and the files a Go process needs from its base.
func TestProcessImage(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "hello")
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", bin, "main.go")
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GO111MODULE=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	archive := filepath.Join(dir, "image.tar")
	if err := ociimage.Process(archive, "partnerapi/hello:test", bin); err != nil {
		t.Fatal(err)
	}

	tag, err := name.NewTag("partnerapi/hello:test")
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(archive, &tag)
	if err != nil {
		t.Fatalf("the archive holds no image tagged partnerapi/hello:test: %v", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" || strings.Join(cf.Config.Entrypoint, " ") != "/process" || strings.Join(cf.Config.Cmd, " ") != "serve" || cf.OS != "linux" {
		t.Errorf("config: user %q entrypoint %q cmd %q os %q; want 65532:65532, /process, serve, linux", cf.Config.User, cf.Config.Entrypoint, cf.Config.Cmd, cf.OS)
	}
	if layers, _ := img.Layers(); len(cf.RootFS.DiffIDs) != len(layers) || len(layers) == 0 {
		t.Errorf("%d diff ids for %d layers", len(cf.RootFS.DiffIDs), len(layers))
	}

	files := map[string]*tar.Header{}
	r := tar.NewReader(mutate.Extract(img))
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimSuffix(h.Name, "/")] = h
		if h.Name == "etc/passwd" {
			b, _ := io.ReadAll(r)
			if !strings.Contains(string(b), "nonroot:x:65532:65532:") {
				t.Errorf("/etc/passwd has no nonroot user 65532:\n%s", b)
			}
		}
	}
	for _, want := range []string{"process", "etc/passwd", "etc/group", "etc/ssl/certs/ca-certificates.crt", "usr/share/zoneinfo/Europe/Helsinki", "tmp"} {
		if files[want] == nil {
			t.Errorf("the image has no /%s", want)
		}
	}
	if h := files["process"]; h != nil && h.Mode&0o111 == 0 {
		t.Errorf("/process mode %o is not executable", h.Mode)
	}
	if h := files["tmp"]; h != nil && h.Mode&0o1777 != 0o1777 {
		t.Errorf("/tmp mode %o, want 1777", h.Mode)
	}
}
