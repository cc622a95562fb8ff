package api_test

import (
	"fmt"
	"strings"
	"testing"
)

// An endpoint URL naming a special-purpose address is refused when saved,
// not only when a delivery dials it.
func TestWebhookURLsNamingSpecialAddressesAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := endpoints
	id := e.createEndpoint("https://partner.example.com/hooks", "51111111-1111-4111-8111-111111111111")
	for i, u := range []string{"https://10.0.0.1/", "https://169.254.169.254/latest/", "https://[fc00::1]/", "https://0.0.0.0/",
		"https://[fe80::1%25eth0]:8443/", "https://[::ffff:10.0.0.1]/", "https://[::a00:1]/", "https://[64:ff9b::a9fe:a9fe]/",
		"https://[64:ff9b:1::1]/", "https://[2002:a00:1::1]/", "https://[2001::1]/", "https://[fec0::1]/", "https://100.64.0.1/"} {
		r := e.call("POST", base, "client-1", manage, createBody{URL: u, EventTypes: []string{"order.created"},
			IdempotencyKey: fmt.Sprintf("61111111-1111-4111-8111-%012d", i)})
		if r.status != 400 || !strings.Contains(string(r.body), "may not reach") {
			t.Errorf("create %s: %d %s", u, r.status, r.body)
		}
		r = e.call("PATCH", base+"/"+id, "client-1", manage, map[string]any{"url": u,
			"idempotencyKey": fmt.Sprintf("71111111-1111-4111-8111-%012d", i)})
		if r.status != 400 || !strings.Contains(string(r.body), "may not reach") {
			t.Errorf("update %s: %d %s", u, r.status, r.body)
		}
	}
}
