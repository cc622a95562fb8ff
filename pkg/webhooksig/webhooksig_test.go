package webhooksig_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/pkg/webhooksig"
)

// The Standard Webhooks specification's published test vector.
const (
	vectorSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTS     = 1614265330
	vectorBody   = `{"test": 2432232314}`
	vectorSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestPublishedVector(t *testing.T) {
	key, err := webhooksig.Key(vectorSecret)
	if err != nil {
		t.Fatal(err)
	}
	if got := webhooksig.Sign(key, vectorID, vectorTS, []byte(vectorBody)); got != vectorSig {
		t.Fatalf("signature %s, want %s", got, vectorSig)
	}
}

func TestVerify(t *testing.T) {
	old, cur := webhooksig.NewSecret(), webhooksig.NewSecret()
	if !strings.HasPrefix(cur, "whsec_") || old == cur {
		t.Fatalf("secrets %q %q", old, cur)
	}
	ko, _ := webhooksig.Key(old)
	kc, _ := webhooksig.Key(cur)
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"id":"evt_1"}`)
	signed := func(keys ...[]byte) http.Header {
		h := http.Header{}
		webhooksig.SetHeaders(h, keys, "evt_1", now, body)
		return h
	}
	cases := []struct {
		name   string
		secret string
		h      http.Header
		body   string
		at     time.Time
		want   error
	}{
		{"one signature", cur, signed(kc), string(body), now, nil},
		{"rotation: old receiver", old, signed(kc, ko), string(body), now, nil},
		{"rotation: new receiver", cur, signed(kc, ko), string(body), now, nil},
		{"other secret", old, signed(kc), string(body), now, webhooksig.ErrSignature},
		{"body changed", cur, signed(kc), `{"id":"evt_2"}`, now, webhooksig.ErrSignature},
		{"too old", cur, signed(kc), string(body), now.Add(6 * time.Minute), webhooksig.ErrTimestamp},
		{"from the future", cur, signed(kc), string(body), now.Add(-6 * time.Minute), webhooksig.ErrTimestamp},
		{"no headers", cur, http.Header{}, string(body), now, webhooksig.ErrMissingHeaders},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := webhooksig.Verify(c.secret, c.h, []byte(c.body), c.at); !errors.Is(err, c.want) {
				t.Fatalf("Verify: %v, want %v", err, c.want)
			}
		})
	}
	if got := len(strings.Fields(signed(kc, ko).Get("webhook-signature"))); got != 2 {
		t.Fatalf("%d signatures during a rotation", got)
	}
}
