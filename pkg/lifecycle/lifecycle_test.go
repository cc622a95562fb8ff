package lifecycle_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/lifecycle"
)

// Shutdown lets an in-flight request finish, refuses new connections, then
// runs the closers in order.
func TestServeDrainsThenClosesInOrder(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	app := httpx.New(httpx.Options{NoTracing: true}, func(r fiber.Router) {
		r.Get("/slow", func(c *fiber.Ctx) error {
			close(entered)
			<-release
			return c.SendString("done")
		})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	closer := func(name string) lifecycle.Closer {
		return lifecycle.Closer{Name: name, Fn: func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			order = append(order, name)
			return nil
		}}
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- lifecycle.Serve(ctx, []lifecycle.Listener{{App: app, Listener: ln}}, closer("database"), closer("telemetry"))
	}()

	body := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/slow")
		if err != nil {
			body <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body <- string(b)
	}()
	<-entered
	cancel()
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	if len(order) != 0 {
		t.Fatalf("closed %v while a request was in flight", order)
	}
	mu.Unlock()
	close(release)
	if got := <-body; got != "done" {
		t.Fatalf("in-flight request got %q", got)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if strings.Join(order, ",") != "database,telemetry" {
		t.Fatalf("close order %v", order)
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), 200*time.Millisecond); err == nil {
		t.Fatal("still accepting connections after shutdown")
	}
}

// A process serves its public and internal applications together; both
// answer, a request in flight on either is drained, and both stop accepting
// before the closers run.
func TestServeSeveralListeners(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	public := httpx.New(httpx.Options{NoTracing: true}, func(r fiber.Router) {
		r.Get("/v1/ping", func(c *fiber.Ctx) error { return c.SendString("public") })
	})
	internal := httpx.NewInternal(httpx.Options{NoTracing: true}, nil, func(r fiber.Router) {
		r.Get("/admin/v1/slow", func(c *fiber.Ctx) error {
			close(entered)
			<-release
			return c.SendString("internal")
		})
	})
	var lns []net.Listener
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
	}
	closed := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- lifecycle.Serve(ctx, []lifecycle.Listener{{App: public, Listener: lns[0]}, {App: internal, Listener: lns[1]}},
			lifecycle.Closer{Name: "database", Fn: func(context.Context) error { close(closed); return nil }})
	}()
	get := func(addr, path string) string {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return "error: " + err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if got := get(lns[0].Addr().String(), "/v1/ping"); got != "public" {
		t.Fatalf("public listener: %q", got)
	}
	body := make(chan string, 1)
	go func() { body <- get(lns[1].Addr().String(), "/admin/v1/slow") }()
	<-entered
	cancel()
	select {
	case <-closed:
		t.Fatal("closers ran while a request was in flight on the internal listener")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if got := <-body; got != "internal" {
		t.Fatalf("in-flight internal request got %q", got)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	<-closed
	for _, ln := range lns {
		if _, err := net.DialTimeout("tcp", ln.Addr().String(), 200*time.Millisecond); err == nil {
			t.Fatalf("%s still accepts connections after shutdown", ln.Addr())
		}
	}
}

// A second address that cannot be opened stops the start and frees the first.
func TestServeReleasesListenersWhenOneAddressFails(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := free.Addr().String()
	free.Close()
	app := func() *fiber.App { return httpx.New(httpx.Options{NoTracing: true}, func(fiber.Router) {}) }
	err = lifecycle.Serve(context.Background(), []lifecycle.Listener{{App: app(), Addr: addr}, {App: app(), Addr: busy.Addr().String()}})
	if err == nil || !strings.Contains(err.Error(), busy.Addr().String()) {
		t.Fatalf("err = %v, want a listen error naming %s", err, busy.Addr())
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("first address still held: %v", err)
	}
	ln.Close()
}
