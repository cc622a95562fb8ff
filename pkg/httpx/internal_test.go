package httpx_test

import (
	"net/http"
	"testing"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/httpx"
)

// Metrics and operator routes exist only on the internal application; the
// public one answers them with the ordinary not-found envelope.
func TestMetricsAndOperatorRoutesOnlyOnTheInternalApp(t *testing.T) {
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("go_goroutines 7\n")) })
	public := httpx.New(httpx.Options{Name: "test", NoTracing: true}, func(r fiber.Router) {})
	internal := httpx.NewInternal(httpx.Options{Name: "test", NoTracing: true}, metrics, func(r fiber.Router) {
		r.Get("/admin/v1/things", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"data": []string{}}) })
	})
	for _, path := range []string{"/metrics", "/admin/v1/things"} {
		resp, env, raw := do(t, public, http.MethodGet, path, "")
		if resp.StatusCode != http.StatusNotFound || env.Error != "not_found" || resp.Header.Get(httpx.HeaderRequestID) == "" {
			t.Errorf("public GET %s: %d %s", path, resp.StatusCode, raw)
		}
		if resp, _, raw := do(t, internal, http.MethodGet, path, ""); resp.StatusCode != http.StatusOK {
			t.Errorf("internal GET %s: %d %s", path, resp.StatusCode, raw)
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		for name, app := range map[string]*fiber.App{"public": public, "internal": internal} {
			if resp, _, raw := do(t, app, http.MethodGet, path, ""); resp.StatusCode != http.StatusOK {
				t.Errorf("%s GET %s: %d %s", name, path, resp.StatusCode, raw)
			}
		}
	}
	// The internal application is built by the same factory: envelope and
	// request id on its unknown paths too.
	resp, env, raw := do(t, internal, http.MethodGet, "/v1/restaurants", "")
	if resp.StatusCode != http.StatusNotFound || env.Error != "not_found" || resp.Header.Get(httpx.HeaderRequestID) == "" {
		t.Errorf("internal unknown path: %d %s", resp.StatusCode, raw)
	}
}
