package cursor_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"partnerapi.dev/pkg/cursor"
)

type pos struct {
	At string `json:"a"`
	ID string `json:"i"`
}

func TestRoundTripTamperAndBinding(t *testing.T) {
	c := cursor.New([]byte("0123456789abcdef0123456789abcdef"))
	q := url.Values{"status": {"paid"}, "limit": {"5"}, "cursor": {"x"}}
	bind := cursor.Bind("orders/r1", q, "cursor", "limit")
	tok, err := c.Encode(bind, pos{"2026-01-01T00:00:00Z", "o1"})
	if err != nil || len(tok) > cursor.MaxLength {
		t.Fatal(err)
	}
	var p pos
	if err := c.Decode(tok, bind, &p); err != nil || p.ID != "o1" {
		t.Fatalf("%v %+v", err, p)
	}
	// A different page size keeps the binding; another filter does not.
	q2 := url.Values{"status": {"paid"}, "limit": {"20"}}
	if err := c.Decode(tok, cursor.Bind("orders/r1", q2, "cursor", "limit"), &p); err != nil {
		t.Fatalf("limit change refused: %v", err)
	}
	q3 := url.Values{"status": {"refunded"}}
	if err := c.Decode(tok, cursor.Bind("orders/r1", q3, "cursor", "limit"), &p); !errors.Is(err, cursor.ErrFilterMismatch) {
		t.Fatalf("filter change: %v", err)
	}
	if err := c.Decode(tok, cursor.Bind("orders/r2", q, "cursor", "limit"), &p); !errors.Is(err, cursor.ErrFilterMismatch) {
		t.Fatalf("other restaurant: %v", err)
	}
	for _, bad := range []string{"", "abc", tok[:len(tok)-2] + "AA", "A" + tok[1:], tok + ".x", strings.Repeat("a", 1025)} {
		if err := c.Decode(bad, bind, &p); !errors.Is(err, cursor.ErrInvalid) {
			t.Errorf("tampered %q: %v", bad, err)
		}
	}
	other := cursor.New([]byte("another-key-another-key-another-k"))
	if err := other.Decode(tok, bind, &p); !errors.Is(err, cursor.ErrInvalid) {
		t.Fatalf("other key: %v", err)
	}
	if _, err := c.Encode(bind, strings.Repeat("x", 2000)); !errors.Is(err, cursor.ErrTooLong) {
		t.Fatalf("oversized: %v", err)
	}
}
