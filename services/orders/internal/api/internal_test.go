package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/services/orders/internal/api"
)

// /metrics is served only by the internal application; on the public one it
// is an unknown path like any other.
func TestMetricsOnlyOnTheInternalListener(t *testing.T) {
	h := &api.Handlers{}
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("go_goroutines 7\n")) })
	get := func(app *fiber.App, path string) (int, string) {
		t.Helper()
		resp, err := app.Test(httptest.NewRequest(http.MethodGet, path, nil), -1)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	public, internal := h.App(nil), api.Internal(nil, metrics)
	st, body := get(public, "/metrics")
	var env struct{ Error string }
	_ = json.Unmarshal([]byte(body), &env)
	if st != http.StatusNotFound || env.Error != "not_found" {
		t.Errorf("public GET /metrics: %d %s", st, body)
	}
	if st, body := get(internal, "/metrics"); st != http.StatusOK || !strings.Contains(body, "go_goroutines") {
		t.Errorf("internal GET /metrics: %d %s", st, body)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		for name, app := range map[string]*fiber.App{"public": public, "internal": internal} {
			if st, body := get(app, path); st != http.StatusOK {
				t.Errorf("%s GET %s: %d %s", name, path, st, body)
			}
		}
	}
	if st, _ := get(internal, "/v1/restaurants/x/orders"); st != http.StatusNotFound {
		t.Errorf("internal GET of a partner path: %d, want 404", st)
	}
}
