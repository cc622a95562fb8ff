package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// /metrics is served only by the internal application; on the public one it
// is an unknown path like any other.
func TestMetricsOnlyOnTheInternalListener(t *testing.T) {
	e := newEnv(t)
	g := e.start(nil, "")
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("go_goroutines 7\n")) })
	internal := g.g.Internal(metrics)

	for _, path := range []string{"/metrics", "/metrics/"} {
		if r := g.do(t, http.MethodGet, path, "", nil); r.status != http.StatusNotFound || r.code() != "not_found" {
			t.Errorf("public GET %s: %d %s", path, r.status, r.body)
		}
	}
	for path, want := range map[string]string{"/metrics": "go_goroutines", "/healthz": `"ok"`, "/readyz": `"ok"`} {
		resp, err := internal.Test(httptest.NewRequest(http.MethodGet, path, nil), -1)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), want) {
			t.Errorf("internal GET %s: %d %s", path, resp.StatusCode, b)
		}
	}
	// Probes stay on the public listener.
	for _, path := range []string{"/healthz", "/readyz"} {
		if r := g.do(t, http.MethodGet, path, "", nil); r.status != http.StatusOK {
			t.Errorf("public GET %s: %d %s", path, r.status, r.body)
		}
	}
}
