package internalctx

import (
	"encoding/json"
	"testing"
	"time"
)

// The hand-written payload must stay byte for byte what encoding/json gives.
func TestContextJSONMatchesEncodingJSON(t *testing.T) {
	cases := []Context{
		{},
		{ClientID: "c", UserID: "u", GrantID: "g", Scopes: []string{}, RequestID: "r", IssuedAt: 1},
		{ClientID: "c", UserID: "u", GrantID: "g", Scopes: []string{"svc.orders.read", "svc.menu.read"},
			Tenant:         &Tenant{ID: "11111111-1111-4111-8111-111111111111", TimeZone: "Europe/Helsinki", DayStartHour: 4, Currency: "EUR", Country: "FI"},
			OrganizationID: "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", RequestID: "req-1", IssuedAt: 1_800_000_000},
		{ClientID: `quote" back\\ <script>&`, UserID: "tab\tnewline\n\x00\x7f", GrantID: "ünïcödé ☃ \u2028", Scopes: []string{"<", ""},
			Tenant: &Tenant{DayStartHour: -3}, RequestID: "bad\xff utf8", IssuedAt: -5},
	}
	for _, c := range cases {
		want, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendContextJSON(nil, &c); string(got) != string(want) {
			t.Errorf("payload\n got %s\nwant %s", got, want)
		}
	}
}

func TestSignIsStableAcrossPooledMACs(t *testing.T) {
	k, err := ParseKeys("k1:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=")
	if err != nil {
		t.Fatal(err)
	}
	k.now = func() time.Time { return fixed }
	c := Context{ClientID: "c", UserID: "u", GrantID: "g", Scopes: []string{"s"}, RequestID: "r"}
	first := k.Sign(c)
	for i := 0; i < 10; i++ {
		if got := k.Sign(c); got != first {
			t.Fatalf("signature changed: %s vs %s", got, first)
		}
	}
	got, err := k.Verify(first)
	if err != nil || got.ClientID != "c" || got.IssuedAt != fixed.Unix() {
		t.Fatalf("verify: %v %+v", err, got)
	}
}

func BenchmarkSign(b *testing.B) {
	k, _ := ParseKeys("k1:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=")
	c := Context{ClientID: "demo-partner", UserID: "user-1", GrantID: "g-1", Scopes: []string{"svc.restaurant.read", "svc.orders.read"},
		Tenant: &Tenant{ID: "11111111-1111-4111-8111-111111111111", TimeZone: "Europe/Helsinki", DayStartHour: 4, Currency: "EUR", Country: "FI"}, RequestID: "req-1"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = k.Sign(c)
	}
}

var fixed = time.Unix(1_800_000_000, 0)
