package api

import "testing"

// TestFormTarget: the consent page's form-action names the origin of the
// redirect URI (or an app's own scheme), and nothing that could break out
// of the policy.
func TestFormTarget(t *testing.T) {
	for in, want := range map[string]string{
		"https://partner.example/cb?x=1":   "https://partner.example",
		"http://127.0.0.1:8976/callback":   "http://127.0.0.1:8976",
		"http://[::1]:8976/callback":       "http://[::1]:8976",
		"com.example.app:/oauth/callback":  "com.example.app:",
		"https://partner.example;x/cb":     "",
		"https://a b.example/cb":           "",
		"/relative":                        "",
		"https://partner.example:99999/cb": "https://partner.example:99999",
	} {
		if got := formTarget(in); got != want {
			t.Errorf("formTarget(%q) = %q, want %q", in, got, want)
		}
	}
}
