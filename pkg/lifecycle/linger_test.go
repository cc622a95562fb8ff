package lifecycle_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/lifecycle"
)

// A client still writing a body over the limit reads the 413 envelope, not
// a connection reset: the server answers, then discards what the client
// still sends before closing.
func TestOversizedBodyIsAnsweredNotReset(t *testing.T) {
	app := httpx.New(httpx.Options{NoTracing: true}, func(r fiber.Router) {
		r.Post("/items", func(c *fiber.Ctx) error { return c.SendStatus(http.StatusNoContent) })
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- lifecycle.Serve(ctx, []lifecycle.Listener{{App: app, Listener: ln}}) }()
	t.Cleanup(func() { cancel(); <-served })

	body := bytes.Repeat([]byte("x"), 2<<20)
	url := "http://" + ln.Addr().String() + "/items"
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
