package domain

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Every search parameter is checked before any SQL: text the database can
// hold, integers in range with a message that says so, and date spans
// counted exactly however long.
func TestParseSearchBounds(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Helsinki")
	if err != nil {
		t.Fatal(err)
	}
	const dates = "start_date=2026-03-10&end_date=2026-03-12&"
	cases := []struct{ query, param, want string }{
		{"order_id=a%00b", "order_id", "order_id must be valid UTF-8 text without NUL characters."},
		{"order_id=%ff%fe", "order_id", "order_id must be valid UTF-8"},
		{"order_id=%c3%28", "order_id", "order_id must be valid UTF-8"},
		{"order_id=%ed%a0%80", "order_id", "order_id must be valid UTF-8"},
		{"order_id=%c0%af", "order_id", "order_id must be valid UTF-8"},
		{dates + "receipt_reference=a%00", "receipt_reference", "receipt_reference must be valid UTF-8"},
		{dates + "receipt_reference=%ff", "receipt_reference", "receipt_reference must be valid UTF-8"},
		{dates + "item_name=%00", "item_name", "item_name must be valid UTF-8"},
		{dates + "item_name=soup%c3%28", "item_name", "item_name must be valid UTF-8"},
		{"cursor=%00", "cursor", "cursor must be"},
		{dates + "payment_method=card%00", "payment_method", "payment_method must be one of"},
		{"limit=99999999999999999999", "limit", "limit is out of range: it must be an integer from 1 to 20."},
		{"limit=9223372036854775808", "limit", "limit is out of range"},
		{"limit=21", "limit", "limit is out of range: it must be an integer from 1 to 20."},
		{"limit=0", "limit", "limit is out of range"},
		{"limit=-99999999999999999999", "limit", "limit is out of range"},
		{"limit=ten", "limit", "limit must be an integer from 1 to 20."},
		{"limit=1.5", "limit", "limit must be an integer from 1 to 20."},
		{"limit=+5", "limit", "limit must be an integer from 1 to 20."},
		{"limit=", "limit", "limit must be an integer from 1 to 20."},
		{dates + "restaurant_order_number=99999999999999999999", "restaurant_order_number", "restaurant_order_number is out of range: it must be an integer from 1 to 9223372036854775807."},
		{dates + "restaurant_order_number=9223372036854775808", "restaurant_order_number", "restaurant_order_number is out of range"},
		{dates + "restaurant_order_number=0", "restaurant_order_number", "restaurant_order_number is out of range"},
		{dates + "restaurant_order_number=x1", "restaurant_order_number", "restaurant_order_number must be an integer from 1 to 9223372036854775807."},
		{dates + "min_total_minor=99999999999999999999", "min_total_minor", "min_total_minor is out of range: it must be an integer from 0 to 9223372036854775807."},
		{dates + "min_total_minor=-1", "min_total_minor", "min_total_minor is out of range"},
		{dates + "max_total_minor=18446744073709551616", "max_total_minor", "max_total_minor is out of range: it must be an integer from 0 to 9223372036854775807."},
		{"start_date=0001-01-01&end_date=9999-12-31", "end_date", "The date range covers 3652059 days;"},
		{"start_date=0001-01-01&end_date=2026-12-31", "end_date", "The date range covers 739981 days;"},
		{"start_date=1970-01-01&end_date=2970-01-01", "end_date", "The date range covers 365244 days;"},
		{"start_date=2026-03-01&end_date=2026-04-01", "end_date", "The date range covers 32 days;"},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			q, err := url.ParseQuery(c.query)
			if err != nil {
				t.Fatal(err)
			}
			_, err = ParseSearch(q, "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a01", loc, 4)
			var inv *InvalidError
			if !errors.As(err, &inv) || inv.Field != c.param || !strings.HasPrefix(inv.Message, c.want) {
				t.Fatalf("got %#v, want %s: %s", err, c.param, c.want)
			}
		})
	}
	for _, ok := range []string{"limit=20", "limit=07", "order_id=Kanelipulla%20%C3%A4%20%F0%9F%8D%A9",
		"start_date=2026-03-01&end_date=2026-03-31&restaurant_order_number=9223372036854775807&min_total_minor=0&max_total_minor=9223372036854775807"} {
		q, _ := url.ParseQuery(ok)
		if _, err := ParseSearch(q, "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a01", loc, 4); err != nil {
			t.Fatalf("%s: %v", ok, err)
		}
	}
}

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
