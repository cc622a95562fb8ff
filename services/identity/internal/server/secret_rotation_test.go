package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// authenticates reports whether identity accepts secret for conf-partner (at the
// introspection endpoint, which authenticates the client before anything else).
func (e *env) authenticates(t *testing.T, secret string) bool {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.base+"/oauth2/introspect", strings.NewReader("token=none"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("conf-partner", secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// A confidential client's secret is rotated through the admin API; the previous
// secret keeps working for the overlap the caller asks for, so a partner can roll
// its deployments, and stops at once with no overlap.
func TestClientSecretRotationOverlap(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if !e.authenticates(t, confSecret) || e.authenticates(t, "wrong-secret-0123456789abcdef") {
		t.Fatal("before rotation: the seeded secret must work and a wrong one must not")
	}
	second := "second-secret-0123456789abcdefgh"
	var out struct {
		Data map[string]any
	}
	if st := e.admin(t, http.MethodPost, "/admin/v1/clients/conf-partner/secret",
		map[string]any{"clientSecret": second, "overlapSeconds": 3600}, &out); st != http.StatusOK {
		t.Fatalf("rotate with overlap: %d %+v", st, out)
	}
	if strings.Contains(strings.ToLower(strings.Join(keys(out.Data), ",")), "secret") {
		t.Errorf("the answer carries secret material: %v", keys(out.Data))
	}
	if !e.authenticates(t, second) || !e.authenticates(t, confSecret) {
		t.Error("during the overlap both the new and the previous secret must work")
	}

	third := "third-secret-0123456789abcdefghi"
	if st := e.admin(t, http.MethodPost, "/admin/v1/clients/conf-partner/secret",
		map[string]any{"clientSecret": third, "overlapSeconds": 0}, nil); st != http.StatusOK {
		t.Fatalf("rotate without overlap: %d", st)
	}
	if !e.authenticates(t, third) || e.authenticates(t, second) || e.authenticates(t, confSecret) {
		t.Error("without overlap only the new secret may work")
	}

	for _, bad := range []map[string]any{
		{"clientSecret": "short", "overlapSeconds": 0},
		{"clientSecret": third, "overlapSeconds": -1},
		{"clientSecret": third, "overlapSeconds": 8 * 24 * 3600},
	} {
		if st := e.admin(t, http.MethodPost, "/admin/v1/clients/conf-partner/secret", bad, nil); st != http.StatusBadRequest {
			t.Errorf("rotate %v: %d, want 400", bad["overlapSeconds"], st)
		}
	}
	if st := e.admin(t, http.MethodPost, "/admin/v1/clients/demo-partner/secret",
		map[string]any{"clientSecret": third, "overlapSeconds": 0}, nil); st != http.StatusBadRequest {
		t.Errorf("rotate a public client's secret: %d, want 400", st)
	}
	if st := e.admin(t, http.MethodPost, "/admin/v1/clients/nobody/secret",
		map[string]any{"clientSecret": third, "overlapSeconds": 0}, nil); st != http.StatusNotFound {
		t.Errorf("rotate an unknown client's secret: %d, want 404", st)
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
