package lifecycle_test

import (
	"bytes"
	"context"
	"encoding/json"
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

// serve runs app under lifecycle.Serve on a free port until the test ends.
func serve(t *testing.T, app *fiber.App) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- lifecycle.Serve(ctx, []lifecycle.Listener{{App: app, Listener: ln}}) }()
	t.Cleanup(func() { cancel(); <-served })
	return ln.Addr().String()
}

// A client still writing a body over the limit reads the 413 envelope, not
// a connection reset: the server answers, then discards what the client
// still sends before closing.
func TestOversizedBodyIsAnsweredNotReset(t *testing.T) {
	app := httpx.New(httpx.Options{NoTracing: true}, func(r fiber.Router) {
		r.Post("/items", func(c *fiber.Ctx) error { return c.SendStatus(http.StatusNoContent) })
	})
	body := bytes.Repeat([]byte("x"), 2<<20)
	url := "http://" + serve(t, app) + "/items"
	for i := 0; i < 40; i++ {
		// A new connection each time, as a client does after a close.
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		res, err := client.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatalf("attempt %d: %v", i, err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(got), `"error":"payload_too_large"`) {
			t.Fatalf("attempt %d: %d %s", i, res.StatusCode, got)
		}
	}
}

// Once shutdown starts, /readyz answers 503 while in-flight requests drain,
// so a load balancer stops sending before the process is gone.
func TestNotReadyWhileDraining(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	public := httpx.New(httpx.Options{NoTracing: true}, func(r fiber.Router) {
		r.Get("/slow", func(c *fiber.Ctx) error {
			close(entered)
			<-release
			return c.SendString("done")
		})
	})
	internal := httpx.NewInternal(httpx.Options{NoTracing: true}, nil, nil)
	var lns []net.Listener
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- lifecycle.Serve(ctx, []lifecycle.Listener{{App: public, Listener: lns[0]}, {App: internal, Listener: lns[1]}})
	}()
	ready := func() int {
		res, err := http.Get("http://" + lns[1].Addr().String() + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := ready(); code != http.StatusOK {
		t.Fatalf("readyz before shutdown: %d", code)
	}
	body := make(chan string, 1)
	go func() {
		res, err := http.Get("http://" + lns[0].Addr().String() + "/slow")
		if err != nil {
			body <- err.Error()
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		body <- string(b)
	}()
	<-entered
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for !lifecycle.Stopping() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if code := ready(); code != http.StatusServiceUnavailable {
		t.Errorf("readyz while draining: %d", code)
	}
	close(release)
	if got := <-body; got != "done" {
		t.Fatalf("in-flight request: %q", got)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}

// Shutting down while clients keep sending requests on kept-alive
// connections closes them without upsetting the server (its idle
// connections are closed from another goroutine).
func TestShutdownUnderKeepAliveLoad(t *testing.T) {
	app := httpx.New(httpx.Options{NoTracing: true}, func(r fiber.Router) {
		r.Get("/ping", func(c *fiber.Ctx) error { return c.SendString("pong") })
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- lifecycle.Serve(ctx, []lifecycle.Listener{{App: app, Listener: ln}}) }()
	stop := make(chan struct{})
	done := make(chan struct{})
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			client := &http.Client{Timeout: 5 * time.Second}
			for {
				select {
				case <-stop:
					return
				default:
				}
				if res, err := client.Get("http://" + ln.Addr().String() + "/ping"); err == nil {
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	close(stop)
	for range 4 {
		<-done
	}
}

// TestOversizedBodyIsA413OnReusedConnections: a Go client sending
// 1 MiB + 1 byte, on fresh and on kept-alive connections, several at once,
// always gets the 413 envelope.
func TestOversizedBodyIsA413OnReusedConnections(t *testing.T) {
	app := httpx.New(httpx.Options{Name: "test", NoTracing: true}, func(r fiber.Router) {
		r.Post("/v1/things", func(c *fiber.Ctx) error { return c.SendStatus(http.StatusNoContent) })
	})
	addr := serve(t, app)
	client := &http.Client{Timeout: 30 * time.Second}
	big := bytes.Repeat([]byte("x"), httpx.DefaultBodyLimit+1)
	var wg sync.WaitGroup
	errs := make(chan string, 200)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				// A small request first leaves a kept-alive connection in the pool.
				if resp, err := client.Post("http://"+addr+"/v1/things", "application/json", strings.NewReader(`{}`)); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				resp, err := client.Post("http://"+addr+"/v1/things", "application/json", bytes.NewReader(big))
				if err != nil {
					errs <- err.Error()
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var env httpx.Envelope
				if resp.StatusCode != http.StatusRequestEntityTooLarge || json.Unmarshal(b, &env) != nil || env.Error != "payload_too_large" || env.RequestID == "" {
					errs <- resp.Status + " " + string(b)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	n := 0
	for e := range errs {
		if n++; n <= 5 {
			t.Error(e)
		}
	}
	if n > 0 {
		t.Fatalf("%d of 100 oversized requests did not get the 413 envelope", n)
	}
}
