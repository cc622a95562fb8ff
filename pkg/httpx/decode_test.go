package httpx_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/pkg/httpx"
)

type decodeCommon struct {
	IdempotencyKey string `json:"idempotencyKey"`
	Confirmed      bool   `json:"confirmed"`
}

type decodeBody struct {
	decodeCommon
	Name     string `json:"name"`
	Document struct {
		Items []struct {
			Name  string `json:"name"`
			Price int    `json:"priceMinor"`
		} `json:"menuItems"`
	} `json:"document"`
	Tags         map[string]string `json:"tags"`
	BusinessDate *bizdate.Date     `json:"businessDate"`
	ExpiresAt    *time.Time        `json:"expiresAt"`
}

// TestDecodeRefusesTextThatIsNotUTF8WithoutNUL: a NUL or an invalid UTF-8
// sequence (raw bytes or an unpaired surrogate escape) in any string or key
// is a 400 naming where it is; encoding/json alone would pass NUL on to
// Postgres (a 500) and turn the rest into U+FFFD.
func TestDecodeRefusesTextThatIsNotUTF8WithoutNUL(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"name":"a\u0000b"}`, "name is not valid text"},
		{"{\"name\":\"caf\xe9\"}", "name is not valid text"},
		{`{"name":"\ud800"}`, "name is not valid text"},
		{`{"name":"x\udc00y"}`, "name is not valid text"},
		{`{"document":{"menuItems":[{"name":"ok"},{"name":"\u0000"}]}}`, "document.menuItems[1].name is not valid text"},
		{`{"tags":{"k":"v\u0000"}}`, "tags.k is not valid text"},
		{`{"tags":{"a\u0000":"v"}}`, "A field name in tags is not valid text"},
		{"{\"tags\":{\"\xff\":\"v\"}}", "A field name in tags is not valid text"},
		{"{\"tags\":{\"k-\xff\":\"v\u0000\"}}", "A field name in tags is not valid text"},
	} {
		var v decodeBody
		err := httpx.Decode([]byte(tc.body), &v)
		var he *httpx.Error
		if err == nil || !asError(err, &he) || he.Status != 400 || !strings.Contains(he.Message, tc.want) {
			t.Errorf("%q: got %v, want 400 with %q", tc.body, err, tc.want)
		}
	}
	for _, ok := range []string{`{"name":"caf\u00e9 \ud83d\ude00 é"}`, `{"name":"\\u0000 is text"}`} {
		var v decodeBody
		if err := httpx.Decode([]byte(ok), &v); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
}

// TestDecodeNamesTheFieldAsWritten: a wrong type names the JSON path the
// request used and what is expected, never a Go struct name.
func TestDecodeNamesTheFieldAsWritten(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"confirmed":"yes"}`, "confirmed must be true or false."},
		{`{"name":12}`, "name must be a string."},
		{`{"name":{"a":1}}`, "name must be a string."},
		{`{"document":5}`, "document must be an object."},
		{`{"document":{"menuItems":[{"priceMinor":1},{"priceMinor":"1"}]}}`, "document.menuItems[1].priceMinor must be an integer."},
		{`{"document":{"menuItems":[{"priceMinor":1.5}]}}`, "document.menuItems[0].priceMinor must be an integer."},
		{`[1]`, "The request body must be an object."},
		{`{"businessDate":"15.11.2026"}`, "businessDate must be a YYYY-MM-DD date."},
		{`{"name":"2026-02-30","businessDate":"2026-02-30"}`, "businessDate must be a YYYY-MM-DD date."},
		{`{"businessDate":20261115}`, "businessDate must be a YYYY-MM-DD date."},
		{`{"expiresAt":"soon"}`, "expiresAt must be an RFC 3339 date-time (2026-11-15T09:30:00Z)."},
		{`{"expiresAt":12}`, "expiresAt must be an RFC 3339 date-time (2026-11-15T09:30:00Z)."},
		{`{"expiresAt":"a\nb"}`, "expiresAt must be an RFC 3339 date-time (2026-11-15T09:30:00Z)."},
		// An unknown field is named by its whole path, at every depth.
		{`{"colour":"red"}`, `Field "colour" is not allowed here.`},
		{`{"document":{"foo":1}}`, `Field "document.foo" is not allowed here.`},
		{`{"document":{"menuItems":[{"name":"a"},{"name":"b","foo":1}]}}`, `Field "document.menuItems[1].foo" is not allowed here.`},
		// A key of that name where it is allowed (a map) is not the one.
		{`{"tags":{"foo":"x"},"document":{"menuItems":[{"foo":1}]}}`, `Field "document.menuItems[0].foo" is not allowed here.`},
	} {
		var v decodeBody
		err := httpx.Decode([]byte(tc.body), &v)
		var he *httpx.Error
		if err == nil || !asError(err, &he) || he.Message != tc.want {
			t.Errorf("%q: got %v, want %q", tc.body, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "decodeCommon") {
			t.Errorf("%q: Go name in %v", tc.body, err)
		}
	}
}

// TestJSONMediaType: exactly application/json, with an optional
// charset=utf-8, names compared without regard to case.
func TestJSONMediaType(t *testing.T) {
	for _, ok := range []string{"", "application/json", "Application/JSON", "application/json; charset=utf-8",
		"application/json;charset=UTF-8", `application/json; CHARSET="utf-8"`} {
		if err := httpx.CheckJSONMediaType(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"application/jsonx", "application/json-patch+json", "application/json; charset=utf-16",
		"application/json; charset=utf-8; q=1", "text/json", "application/json, text/plain", "application/x-www-form-urlencoded"} {
		if err := httpx.CheckJSONMediaType(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	app := testApp()
	resp, env, raw := do(t, app, "POST", "/v1/things", `{"name":"a"}`, "Content-Type", "application/jsonx")
	if resp.StatusCode != 400 || env.Error != "invalid_request" {
		t.Fatalf("application/jsonx: %d %s", resp.StatusCode, raw)
	}
}

func asError(err error, target **httpx.Error) bool { return errors.As(err, target) }
