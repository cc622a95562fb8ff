package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// FuzzOrderRoutes sends order search and order details, against a real
// database, with arbitrary bytes in one path segment, one query parameter
// value and one query parameter name. The service must never fail (5xx),
// always answer the envelope with the request id on an error, and never show
// internals. make test runs it for a bounded time.
func FuzzOrderRoutes(f *testing.F) {
	e := newEnv(f)
	e.ingest(order(helsinki, "ord-1", time.Date(2026, 3, 11, 12, 0, 0, 0, time.UTC)))
	for i, seed := range []string{"a\x00b", "\xff\xfe", "\xc3\x28", "\xed\xa0\x80", "\xc0\xaf", "..", "%2e%2e", "%zz", "'", "ord-1", strings.Repeat("€", 256), "", "2026-03-11", "99999999999999999999", "-1"} {
		f.Add(uint8(i), "ord-1", "order_id", seed)
		f.Add(uint8(i), seed, "start_date", "2026-03-10")
		f.Add(uint8(i), "ord-1", seed, "1")
	}
	leaks := regexp.MustCompile(`goroutine|panic|SQLSTATE|\.go:\d|pq:|pgx|relation|column`)
	f.Fuzz(func(t *testing.T, route uint8, segment, key, value string) {
		parts := []string{"", "v1", "restaurants", helsinki, "orders"}
		if route%2 == 1 {
			parts = append(parts, url.PathEscape(segment))
		} else if route%4 == 2 {
			parts[3] = url.PathEscape(segment)
		}
		query := url.QueryEscape(key) + "=" + url.QueryEscape(value) + "&start_date=2026-03-10&end_date=2026-03-12"
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.URL = &url.URL{Opaque: strings.Join(parts, "/"), RawQuery: query}
		req.RequestURI = ""
		status, body := e.send(t, req)
		if status >= 500 {
			t.Fatalf("%s?%s: %d %s", req.URL.Opaque, query, status, body)
		}
		var env struct {
			Error     string `json:"error"`
			RequestID string `json:"request_id"`
		}
		if err := json.Unmarshal(body, &env); err != nil {
			t.Fatalf("%s?%s: not JSON: %d %s", req.URL.Opaque, query, status, body)
		}
		if status >= 400 && (env.Error == "" || env.RequestID == "") {
			t.Fatalf("%s?%s: not the envelope: %d %s", req.URL.Opaque, query, status, body)
		}
		if m := leaks.Find(body); m != nil {
			t.Fatalf("%s?%s: the answer shows %q: %s", req.URL.Opaque, query, m, body)
		}
	})
}

// send serves a prepared request as the gateway would send it, for the
// helsinki tenant.
func (e *env) send(t testing.TB, req *http.Request) (int, []byte) {
	t.Helper()
	e.sign(req, helsinki)
	resp, err := e.app.Test(req, 30_000)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}
