package sealed_test

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"partnerapi.dev/services/events/internal/sealed"
)

func key(b byte) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32)) }

func TestSealOpenAndRotate(t *testing.T) {
	old, err := sealed.Parse("k1:" + key(1))
	if err != nil {
		t.Fatal(err)
	}
	v, err := old.Seal("whsec_abc", "ep-1")
	if err != nil || !strings.HasPrefix(v, "sealed:v1:k1:") || strings.Contains(v, "whsec_") {
		t.Fatalf("%q %v", v, err)
	}
	if got, err := old.Open(v, "ep-1"); err != nil || got != "whsec_abc" {
		t.Fatalf("%q %v", got, err)
	}
	if _, err := old.Open(v, "ep-2"); err == nil {
		t.Fatal("a value moved to another endpoint opened")
	}
	rotated, err := sealed.Parse("k2:" + key(2) + ",k1:" + key(1))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := rotated.Open(v, "ep-1"); err != nil || got != "whsec_abc" || rotated.Current(v) || !old.Current(v) {
		t.Fatalf("old key in the ring: %q %v", got, err)
	}
	if got, _ := rotated.Open("whsec_plain", "ep-1"); got != "whsec_plain" {
		t.Fatal("a value not sealed yet does not pass")
	}
	only2, _ := sealed.Parse("k2:" + key(2))
	if _, err := only2.Open(v, "ep-1"); err == nil {
		t.Fatal("opened without its key")
	}
	for _, bad := range []string{"", "k1", "k1:short", "k 1:" + key(1), "k1:" + key(1) + ",k1:" + key(2)} {
		if _, err := sealed.Parse(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
