package server_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestProtectedResourceMetadataValidatesStrictly does what a strict RFC 9728
// client does: follow resource_metadata from the challenge, take the
// resource identifier back out of that address (section 3.1), and require
// the document's resource to be exactly it (section 3.3).
func TestProtectedResourceMetadataValidatesStrictly(t *testing.T) {
	for _, c := range []struct{ audience, path string }{
		{"", "/.well-known/oauth-protected-resource/v1"},
		{baseURL + "/partner/v1", "/.well-known/oauth-protected-resource/partner/v1"},
		{baseURL, "/.well-known/oauth-protected-resource"},
	} {
		t.Run(c.path, func(t *testing.T) {
			e := newEnv(t)
			if c.audience != "" {
				e.vars["TOKEN_AUDIENCE"] = c.audience
			}
			g := e.start(nil, "")
			r := g.do(t, "GET", "/v1/restaurants", "", nil)
			m := regexp.MustCompile(`resource_metadata="([^"]+)"`).FindStringSubmatch(r.header.Get("WWW-Authenticate"))
			if r.status != 401 || m == nil || m[1] != baseURL+c.path {
				t.Fatalf("%d %q", r.status, r.header.Get("WWW-Authenticate"))
			}
			resource := baseURL + strings.TrimPrefix(c.path, "/.well-known/oauth-protected-resource")
			r = g.do(t, "GET", c.path, "", nil)
			var md struct {
				Resource string `json:"resource"`
			}
			if err := json.Unmarshal(r.body, &md); err != nil || r.status != 200 || md.Resource != resource {
				t.Fatalf("%s: %d %s, want resource %s", c.path, r.status, r.body, resource)
			}
		})
	}
}
