package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/tools/ociimage"
)

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"partnerapi/orders:abc":           "docker.io/partnerapi/orders:abc",
		"partnerapi/orders":               "docker.io/partnerapi/orders:latest",
		"postgres:16":                     "docker.io/library/postgres:16",
		"registry.example.com/a/b:1":      "registry.example.com/a/b:1",
		"localhost:5000/a":                "localhost:5000/a:latest",
		"localhost/a:2":                   "localhost/a:2",
		"docker.io/partnerapi/orders:abc": "docker.io/partnerapi/orders:abc",
		"sha256:0123456789abcdef":         "sha256:0123456789abcdef",
	} {
		if got := normalize(in); got != want {
			t.Errorf("normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAgainstContainerd serves the handler from a real containerd (Debian's, started here
// with its own root, state and socket): an image imported with ctr is found by name and by
// ID, a tag by ID names the same image, a tag that is no image reference is refused, an unknown name is a 404 and removal is not served.
func TestAgainstContainerd(t *testing.T) {
	if _, err := exec.LookPath("containerd"); err != nil {
		t.Skip("no containerd on PATH (Debian package containerd; the local cluster needs it too)")
	}
	if os.Geteuid() != 0 {
		t.Skip("containerd needs root")
	}
	dir, err := os.MkdirTemp("", "nodeimages-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "containerd.sock")
	config := fmt.Sprintf("version = 2\nroot = %q\nstate = %q\ndisabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n[grpc]\n  address = %q\n",
		filepath.Join(dir, "root"), filepath.Join(dir, "state"), sock)
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "containerd", "--config", filepath.Join(dir, "config.toml"))
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	s := store{address: sock}
	for i := 0; ; i++ {
		if _, err := s.ctr(ctx, "version"); err == nil {
			break
		} else if i == 100 {
			t.Fatalf("containerd did not answer: %v\n%s", err, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	archive := filepath.Join(dir, "image.tar")
	if err := ociimage.Static(archive, "partnerapi/sample:built", "/bin/true"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ctr(ctx, "images", "import", archive); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler(s))
	t.Cleanup(srv.Close)
	call := func(method, path string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}

	if code, _ := call("GET", "/_ping"); code != 200 {
		t.Fatalf("ping: %d", code)
	}
	code, body := call("GET", "/v1.43/images/partnerapi/sample:built/json")
	id, _ := body["Id"].(string)
	if code != 200 || !strings.HasPrefix(id, "sha256:") {
		t.Fatalf("inspect by name: %d %v", code, body)
	}
	if code, body := call("GET", "/v1.43/images/"+id+"/json"); code != 200 || body["Id"] != id {
		t.Fatalf("inspect by ID: %d %v", code, body)
	}
	hex := strings.TrimPrefix(id, "sha256:")
	if code, _ := call("POST", "/v1.43/images/"+id+"/tag?repo=partnerapi/sample&tag="+hex); code != 201 {
		t.Fatalf("tag by ID: %d", code)
	}
	if code, body := call("GET", "/v1.43/images/partnerapi/sample:"+hex+"/json"); code != 200 || body["Id"] != id {
		t.Fatalf("inspect the new name: %d %v", code, body)
	}
	// A name ctr could read as one of its flags, or no image reference at all, is refused.
	for _, q := range []string{"repo=-x.y/sample&tag=dev", "repo=partnerapi/sample&tag=-dev", "repo=partnerapi/Sample&tag=dev"} {
		if code, _ := call("POST", "/v1.43/images/"+id+"/tag?"+q); code != 400 {
			t.Fatalf("tag %s: %d, want 400", q, code)
		}
	}
	if code, body := call("GET", "/v1.43/images/partnerapi/sample:other/json"); code != 404 || !strings.Contains(fmt.Sprint(body["message"]), "No such image") {
		t.Fatalf("unknown name: %d %v, want 404 No such image", code, body)
	}
	if code, _ := call("DELETE", "/v1.43/images/"+id); code != 501 {
		t.Fatalf("remove: %d, want 501", code)
	}
}
