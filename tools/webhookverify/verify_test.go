package webhookverify_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/pkg/webhooksig"
	"partnerapi.dev/tools/npmci"
)

type message struct {
	Secret  string            `json:"secret"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
	Now     int64             `json:"now,omitempty"`
}

// TestStandardWebhooksLibraryAcceptsOurSignatures signs with
// pkg/webhooksig and verifies with the npm package: one secret, a rotation
// (either secret verifies), and refusals of a changed body and a foreign
// secret.
func TestStandardWebhooksLibraryAcceptsOurSignatures(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	npmci.Install(t)
	old, cur := webhooksig.NewSecret(), webhooksig.NewSecret()
	ko, _ := webhooksig.Key(old)
	kc, _ := webhooksig.Key(cur)
	body := `{"id":"evt_01J0000000000000000000000A","type":"order.created","seq":7}`
	sign := func(body string, keys ...[]byte) map[string]string {
		h := http.Header{}
		webhooksig.SetHeaders(h, keys, "evt_01J0000000000000000000000A", time.Now(), []byte(body))
		return map[string]string{"webhook-id": h.Get("webhook-id"), "webhook-timestamp": h.Get("webhook-timestamp"), "webhook-signature": h.Get("webhook-signature")}
	}
	cases := []struct {
		name string
		msg  message
		ok   bool
	}{
		{"one secret", message{cur, sign(body, kc), body, 0}, true},
		{"rotation, new secret", message{cur, sign(body, kc, ko), body, 0}, true},
		{"rotation, old secret", message{old, sign(body, kc, ko), body, 0}, true},
		{"changed body", message{cur, sign(body, kc), body + " ", 0}, false},
		{"other secret", message{old, sign(body, kc), body, 0}, false},
	}
	msgs := make([]message, len(cases))
	for i, c := range cases {
		msgs[i] = c.msg
	}
	got := Run(t, msgs)
	for i, c := range cases {
		if (got[i] == "ok") != c.ok {
			t.Errorf("%s: standardwebhooks says %q", c.name, got[i])
		}
	}
	// The published vector, through the npm package.
	vec := message{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", map[string]string{"webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
		"webhook-timestamp": "1614265330", "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="}, `{"test": 2432232314}`, 1614265330}
	tampered := vec
	tampered.Body = `{"test": 2432232315}`
	if got := Run(t, []message{vec, tampered}); got[0] != "ok" || got[1] == "ok" {
		t.Fatalf("published vector: %q, tampered: %q", got[0], got[1])
	}
}

// Run verifies msgs with verify.mjs and returns its line per message.
func Run(t *testing.T, msgs []message) []string {
	t.Helper()
	var in bytes.Buffer
	for _, m := range msgs {
		b, _ := json.Marshal(m)
		in.Write(append(b, '\n'))
	}
	cmd := exec.Command("node", "verify.mjs")
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node verify.mjs: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(msgs) {
		t.Fatalf("verify.mjs answered %d lines for %d messages: %s", len(lines), len(msgs), out)
	}
	return lines
}
