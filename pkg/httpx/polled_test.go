package httpx_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/httpx"
)

// TestPolledPathsAreQuiet: a path other processes poll writes no access
// log line, as /healthz; every other path writes one. Not parallel: it
// watches the process's log.
func TestPolledPathsAreQuiet(t *testing.T) {
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	app := httpx.New(httpx.Options{Name: "test", Polled: []string{"/internal/v1/changes"}}, func(r fiber.Router) {
		r.Get("/internal/v1/changes", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{}) })
		r.Get("/v1/things", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{}) })
	})
	for _, path := range []string{"/internal/v1/changes", "/healthz", "/internal/v1/changes"} {
		if resp, _, _ := do(t, app, "GET", path, ""); resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
	}
	if logs.Len() != 0 {
		t.Fatalf("polled paths logged:\n%s", logs.String())
	}
	do(t, app, "GET", "/v1/things", "")
	if !strings.Contains(logs.String(), "route=/v1/things") {
		t.Fatalf("a partner path logged nothing:\n%s", logs.String())
	}
}
