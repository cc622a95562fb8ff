package proxy

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

// A service draining for a rollout closes its kept-alive connections; a
// write meeting one that was closed before anything was answered goes
// again on a new connection when it is resendable (it carries an
// idempotency key), and fails when it is not.
func TestAResendableWriteIsSentAgainWhenItsKeptAliveConnectionWasClosed(t *testing.T) {
	for _, resendable := range []bool{true, false} {
		u := newRawUpstream(t, hangsUpAfterEachAnswer)
		up := New("menus", "http://"+u.addr, time.Second, 2*time.Second)
		app := fiber.New()
		app.Post("/x", func(c *fiber.Ctx) error {
			if err := up.Forward(c, Request{Resendable: resendable}); err != nil {
				return c.Status(fiber.StatusServiceUnavailable).SendString(err.Error())
			}
			return nil
		})
		post := func() (int, string) {
			res, err := app.Test(httptest.NewRequest("POST", "/x", strings.NewReader(`{"idempotencyKey":"k"}`)), -1)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			return res.StatusCode, string(body)
		}
		if code, body := post(); code != 200 || body != "ok" {
			t.Fatalf("first write: %d %s", code, body)
		}
		time.Sleep(50 * time.Millisecond) // the upstream closed the kept-alive connection
		code, body := post()
		if resendable && (code != 200 || body != "ok" || u.requests.Load() != 2 || u.conns.Load() != 2) {
			t.Errorf("resendable write on a closed connection: %d %s, upstream saw %d requests on %d connections", code, body, u.requests.Load(), u.conns.Load())
		}
		if !resendable && (code != fiber.StatusServiceUnavailable || u.requests.Load() != 1) {
			t.Errorf("write that is not resendable on a closed connection: %d %s, upstream saw %d requests", code, body, u.requests.Load())
		}
	}
}
