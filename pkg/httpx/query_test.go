package httpx_test

import (
	"net/url"
	"testing"

	"partnerapi.dev/pkg/httpx"
)

func TestAllowQueryNamesTheFirstParameterOutside(t *testing.T) {
	for _, c := range []struct {
		query, name    string
		once, repeated bool
	}{
		{"", "", true, false},
		{"limit=1&cursor=x", "", true, false},
		{"limit=1&limit=2", "", false, false},
		{"limit=1&limit=2", "limit", true, true},
		{"zeta=1&beta=2&limit=1", "beta", true, false},
		{"cursor=1&cursor=2&zeta=1", "cursor", true, true},
		{"organization_id=o", "organization_id", false, false},
	} {
		q, err := url.ParseQuery(c.query)
		if err != nil {
			t.Fatal(err)
		}
		name, repeated := httpx.AllowQuery(q, c.once, "limit", "cursor")
		if name != c.name || repeated != c.repeated {
			t.Errorf("%q once=%v: %q %v, want %q %v", c.query, c.once, name, repeated, c.name, c.repeated)
		}
	}
}
