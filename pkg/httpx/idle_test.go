package httpx_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/httpx"
)

// TestIdleTimeoutOutlastsCommonClients: the server keeps an idle
// connection open longer than common clients keep theirs in their pools
// (Go's http.Transport 90 s, OkHttp 5 min), so a client never sends a
// request on a connection the server is closing at that moment (the
// client then sees EOF instead of an answer).
func TestIdleTimeoutOutlastsCommonClients(t *testing.T) {
	app := httpx.New(httpx.Options{Name: "test", NoTracing: true}, func(fiber.Router) {})
	goIdle := http.DefaultTransport.(*http.Transport).IdleConnTimeout
	okHTTPIdle := 5 * time.Minute
	if got := app.Config().IdleTimeout; got != httpx.IdleTimeout || got <= goIdle || got <= okHTTPIdle {
		t.Fatalf("idle timeout %v; Go's client keeps idle connections %v, OkHttp %v", got, goIdle, okHTTPIdle)
	}
}
