package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/pkg/webhooksig"
)

func TestReceiverVerifiesAndAppliesBySeq(t *testing.T) {
	secret := webhooksig.NewSecret()
	key, _ := webhooksig.Key(secret)
	var out bytes.Buffer
	now := time.Unix(1_800_000_000, 0)
	r := &receiver{secret: secret, out: &out, now: func() time.Time { return now }, last: map[string]int64{}}
	post := func(seq, sign string) int {
		body := []byte(`{"id":"evt_1","type":"order.created","timestamp":"2026-11-02T10:00:00Z","restaurantId":"r1","seq":` + seq + `,"data":{}}`)
		req := httptest.NewRequest("POST", "/", bytes.NewReader(body))
		k := key
		if sign == "other" {
			k, _ = webhooksig.Key(webhooksig.NewSecret())
		}
		webhooksig.SetHeaders(req.Header, [][]byte{k}, "evt_1", now, body)
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		return w.Code
	}
	for _, c := range []struct {
		seq, sign string
		code      int
		line      string
	}{
		{"2", "", http.StatusNoContent, "seq=2 order.created restaurant=r1 id=evt_1 (applied)"},
		{"1", "", http.StatusNoContent, "seq=1 order.created restaurant=r1 id=evt_1 (skipped"},
		{"0", "", http.StatusNoContent, "(test event)"},
		{"3", "other", http.StatusUnauthorized, "REFUSED evt_1"},
	} {
		out.Reset()
		if code := post(c.seq, c.sign); code != c.code || !strings.Contains(out.String(), c.line) {
			t.Fatalf("seq %s: %d %q", c.seq, code, out.String())
		}
	}
}
