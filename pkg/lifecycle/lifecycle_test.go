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
	go func() { served <- lifecycle.ServeListener(ctx, app, ln, closer("database"), closer("telemetry")) }()

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
