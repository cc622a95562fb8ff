package api_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/services/orders/internal/api"
	"partnerapi.dev/services/orders/internal/domain"
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
			_, err = api.ParseSearch(q, "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a01", loc, 4)
			var inv *domain.InvalidError
			if !errors.As(err, &inv) || inv.Field != c.param || !strings.HasPrefix(inv.Message, c.want) {
				t.Fatalf("got %#v, want %s: %s", err, c.param, c.want)
			}
		})
	}
	for _, ok := range []string{"limit=20", "limit=07", "order_id=Kanelipulla%20%C3%A4%20%F0%9F%8D%A9",
		"start_date=2026-03-01&end_date=2026-03-31&restaurant_order_number=9223372036854775807&min_total_minor=0&max_total_minor=9223372036854775807"} {
		q, _ := url.ParseQuery(ok)
		if _, err := api.ParseSearch(q, "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a01", loc, 4); err != nil {
			t.Fatalf("%s: %v", ok, err)
		}
	}
}
