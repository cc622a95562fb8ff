package domain

import (
	"errors"
	"strings"
	"testing"
)

// Order details take the orderId bound of order_id, and text only.
func TestOrderIDParam(t *testing.T) {
	for _, c := range []struct {
		id   string
		want string
	}{
		{strings.Repeat("z", 256), "orderId must be 1 to 255 characters."},
		{strings.Repeat("é", 256), "orderId must be 1 to 255 characters."},
		{"", "orderId must be 1 to 255 characters."},
		{"a\x00b", "orderId must be valid UTF-8 text without NUL characters."},
		{"\xff\xfe", "orderId must be valid UTF-8"},
		{"\xc3\x28", "orderId must be valid UTF-8"},
		{"\xed\xa0\x80", "orderId must be valid UTF-8"},
		{"\xc0\xaf", "orderId must be valid UTF-8"},
		{strings.Repeat("é", 255), ""},
		{strings.Repeat("z", 255), ""},
	} {
		err := OrderIDParam(c.id)
		var inv *InvalidError
		if c.want == "" {
			if err != nil {
				t.Fatalf("%q: %v", c.id, err)
			}
			continue
		}
		if !errors.As(err, &inv) || inv.Field != "orderId" || !strings.HasPrefix(inv.Message, c.want) {
			t.Fatalf("%q: got %v, want %s", c.id, err, c.want)
		}
	}
}
