package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// The admin API and /metrics answer only on the internal listener. On the
// public one they are unknown paths, with the admin token or without, under
// any spelling a proxy in front might pass on.
func TestAdminAPIAndMetricsOnlyOnTheInternalListener(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	withToken := map[string]string{"Authorization": "Bearer " + adminToken}
	for _, path := range []string{
		"/admin/v1/clients", "/admin/v1/clients/demo-partner", "/admin/v1/grants", "/admin/v1/keys",
		"/oauth2/../admin/v1/clients", "/oauth2/%2e%2e/admin/v1/clients", "/oauth2/..%2fadmin/v1/clients",
		"/metrics", "/oauth2/%2e%2e/metrics",
	} {
		var env errorAnswer
		if st := e.call(t, http.MethodGet, path, nil, &env, withToken); st != http.StatusNotFound || env.Error != "not_found" || env.RequestID == "" {
			t.Errorf("public GET %s: %d %+v", path, st, env)
		}
	}
	var env errorAnswer
	if st := e.call(t, http.MethodPost, "/admin/v1/keys/rotate", nil, &env, withToken); st != http.StatusNotFound || env.Error != "not_found" {
		t.Errorf("public POST /admin/v1/keys/rotate: %d %+v", st, env)
	}

	var clients struct{ Data []struct{ ClientID string } }
	if st := e.admin(t, http.MethodGet, "/admin/v1/clients", nil, &clients); st != http.StatusOK || len(clients.Data) == 0 {
		t.Fatalf("internal GET /admin/v1/clients: %d %+v", st, clients)
	}
	for path, want := range map[string]string{"/metrics": "identity_test_metric", "/healthz": `"ok"`, "/readyz": `"ok"`} {
		resp, err := http.Get(e.internal + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), want) {
			t.Errorf("internal GET %s: %d %s", path, resp.StatusCode, b)
		}
	}
	// Probes stay on the public listener; the OAuth surface is only there.
	for _, path := range []string{"/healthz", "/readyz", "/oauth2/jwks"} {
		if st := e.call(t, http.MethodGet, path, nil, nil, nil); st != http.StatusOK {
			t.Errorf("public GET %s: %d", path, st)
		}
	}
	if st := e.send(t, e.internal, http.MethodGet, "/oauth2/jwks", nil, nil, nil); st != http.StatusNotFound {
		t.Errorf("internal GET /oauth2/jwks: %d, want 404", st)
	}
}
