// Package e2e runs the whole system the way make run does (devstack with the
// real binaries, real Postgres and Redis, seeded demo data, a token from the
// real OAuth flow) and checks partner calls through the gateway.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/tools/seed"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// binaries builds every process like a team would: each module on its own.
func binaries(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	for _, b := range []struct{ module, pkg string }{
		{"../../gateway", "./cmd/gateway"},
		{"../../services/identity", "./cmd/identity"},
		{"../../services/identity", "./cmd/partnerctl"},
		{"../../services/orders", "./cmd/orders"},
		{"..", "./cmd/devstack"},
		{"..", "./cmd/seed"},
	} {
		cmd := exec.Command("go", "build", "-o", bin, b.pkg)
		cmd.Dir = b.module
		cmd.Env = append(os.Environ(), "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s %s: %v\n%s", b.module, b.pkg, err, out)
		}
	}
	return bin
}

// freeOffset finds a port offset at which the gateway, identity and orders
// ports (8080..8082 + offset) are all free.
func freeOffset(t *testing.T) int {
	for base := 21000; base < 60000; base += 97 {
		ok := true
		for i := range 3 {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+i))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return base - 8080
		}
	}
	t.Fatal("no free ports")
	return 0
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type system struct {
	base, token string
}

func start(t *testing.T) system {
	t.Helper()
	bin := binaries(t)
	dbURL := testenv.NewDatabase(t, "e2e", func(context.Context, string) error { return nil })
	offset := freeOffset(t)
	cmd := exec.Command(filepath.Join(bin, "devstack"), "run", "--data", t.TempDir(), "--bin", bin, "--port-offset", fmt.Sprint(offset))
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL, "REDIS_URL="+testenv.RedisURL(t))
	var logs syncBuffer
	cmd.Stderr = &logs
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("devstack did not stop cleanly: %v\n%s", err, logs.String())
			}
		case <-time.After(40 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("devstack did not stop within 40s\n%s", logs.String())
		}
	})

	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	sys := system{base: fmt.Sprintf("http://127.0.0.1:%d", 8080+offset)}
	timeout := time.After(3 * time.Minute)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("devstack exited before it was ready:\n%s", logs.String())
			}
			if v, found := strings.CutPrefix(strings.TrimSpace(line), "export TOKEN="); found {
				sys.token = v
			}
			if strings.HasPrefix(line, "Press Ctrl-C") {
				if sys.token == "" {
					t.Fatalf("no demo token printed:\n%s", logs.String())
				}
				go func() { // keep draining
					for range lines {
					}
				}()
				return sys
			}
		case <-timeout:
			t.Fatalf("devstack not ready after 3 minutes:\n%s", logs.String())
		}
	}
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (s system) get(t *testing.T, path, token string) answer {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.base+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.Header.Get("X-Request-Id") == "" || resp.Header.Get("RateLimit-Policy") != `"partner";q=60;w=60` {
		t.Errorf("GET %s: missing X-Request-Id or RateLimit-Policy: %v", path, resp.Header)
	}
	u, _ := url.Parse(path)
	apispec.ValidateResponse(t, http.MethodGet, u.Path, u.Query(), resp.StatusCode, resp.Header, body)
	return answer{resp.StatusCode, resp.Header, body}
}

func TestPartnerCallsThroughTheGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and starts every process")
	}
	sys := start(t)
	g := seed.Generator{Seed: 42}
	aalto := g.ID("restaurant/kahvila-aalto")
	outside := g.ID("restaurant/nordic-helsinki")

	t.Run("restaurants", func(t *testing.T) {
		a := sys.get(t, "/v1/restaurants", sys.token)
		var got struct {
			Data []struct{ RestaurantID, RestaurantName, Role string }
			Meta struct {
				Boundary string `json:"authorization_boundary"`
			}
		}
		if err := json.Unmarshal(a.body, &got); err != nil || a.status != 200 {
			t.Fatalf("%d %s", a.status, a.body)
		}
		if len(got.Data) != 1 || got.Data[0].RestaurantID != aalto || got.Data[0].Role != "owner" || got.Meta.Boundary != "restaurant" {
			t.Fatalf("restaurants: %s", a.body)
		}
	})

	t.Run("orders pages and details", func(t *testing.T) {
		type page struct {
			Data struct {
				Currency string
				Matches  []struct {
					OrderID string `json:"orderId"`
				}
				NextCursor *string `json:"nextCursor"`
			}
		}
		first := sys.get(t, "/v1/restaurants/"+aalto+"/orders?limit=3", sys.token)
		var p1 page
		if err := json.Unmarshal(first.body, &p1); err != nil || first.status != 200 || len(p1.Data.Matches) != 3 || p1.Data.NextCursor == nil || p1.Data.Currency != "EUR" {
			t.Fatalf("first page: %d %s", first.status, first.body)
		}
		second := sys.get(t, "/v1/restaurants/"+aalto+"/orders?limit=3&cursor="+url.QueryEscape(*p1.Data.NextCursor), sys.token)
		var p2 page
		if err := json.Unmarshal(second.body, &p2); err != nil || second.status != 200 || len(p2.Data.Matches) != 3 {
			t.Fatalf("second page: %d %s", second.status, second.body)
		}
		seen := map[string]bool{}
		for _, m := range append(p1.Data.Matches, p2.Data.Matches...) {
			if seen[m.OrderID] {
				t.Fatalf("order %s on two pages", m.OrderID)
			}
			seen[m.OrderID] = true
		}
		id := p1.Data.Matches[0].OrderID
		d := sys.get(t, "/v1/restaurants/"+aalto+"/orders/"+url.PathEscape(id), sys.token)
		if d.status != 200 || !bytes.Contains(d.body, []byte(`"orderId":"`+id+`"`)) {
			t.Fatalf("details: %d %s", d.status, d.body)
		}
	})

	t.Run("outside the grant looks like nothing", func(t *testing.T) {
		other := sys.get(t, "/v1/restaurants/"+outside+"/orders", sys.token)
		unknown := sys.get(t, "/v1/restaurants/00000000-0000-4000-8000-000000000000/orders", sys.token)
		if other.status != 404 || unknown.status != 404 {
			t.Fatalf("got %d and %d", other.status, unknown.status)
		}
		strip := func(b []byte) string {
			var m map[string]any
			_ = json.Unmarshal(b, &m)
			delete(m, "request_id")
			out, _ := json.Marshal(m)
			return string(out)
		}
		if strip(other.body) != strip(unknown.body) {
			t.Fatalf("bodies differ: %s vs %s", other.body, unknown.body)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		if a := sys.get(t, "/v1/restaurants", ""); a.status != 401 || !strings.Contains(a.header.Get("WWW-Authenticate"), "resource_metadata=") {
			t.Fatalf("no token: %d %v", a.status, a.header)
		}
		tampered := sys.token[:len(sys.token)-4] + "AAAA"
		if a := sys.get(t, "/v1/restaurants", tampered); a.status != 401 || !strings.Contains(a.header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Fatalf("tampered: %d %v", a.status, a.header)
		}
		a := sys.get(t, "/v1/organizations", sys.token)
		if a.status != 403 || !strings.Contains(a.header.Get("WWW-Authenticate"), "svc.organization.read") {
			t.Fatalf("missing scope: %d %v %s", a.status, a.header, a.body)
		}
		if a := sys.get(t, "/v1/restaurants/"+aalto+"/menus", sys.token); a.status != 503 || !bytes.Contains(a.body, []byte(`"service_unavailable"`)) {
			t.Fatalf("service not deployed: %d %s", a.status, a.body)
		}
	})
}
