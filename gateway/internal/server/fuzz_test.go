package server_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzPartnerRoutes sends every partner operation with arbitrary bytes in one
// path segment, one query parameter value and one query parameter name. The
// gateway must never fail (5xx), always answer with the edge headers and, on
// an error, the envelope, never quote the bytes it was sent, and never pass
// text that is not UTF-8 on to a service. make test runs it for a bounded time.
func FuzzPartnerRoutes(f *testing.F) {
	e := newEnv(f)
	e.vars["RATE_LIMIT_PER_MINUTE"] = "1000000000"
	g := e.start(nil, "")
	g.listen(f)
	tok := e.id.token(f, tokenOpts{})
	ops := g.g.Operations()
	for i, seed := range []string{"a\x00b", "\xff\xfe", "\xc3\x28", "\xed\xa0\x80", "\xc0\xaf", "..", "%2e%2e", "%zz", "a/b", "\\", strings.Repeat("€", 256), "", " ", "ord-1"} {
		f.Add(uint8(i), uint8(i), seed, "order_id", seed)
		f.Add(uint8(i), uint8(i+1), "ord-1", seed, "x")
	}
	var conn rawConn // one per worker process
	f.Cleanup(conn.close)
	leaks := regexp.MustCompile(`goroutine|panic|SQLSTATE|\.go:\d|Bearer|Authorization`)
	f.Fuzz(func(t *testing.T, opIndex, segIndex uint8, segment, key, value string) {
		op := ops[int(opIndex)%len(ops)]
		parts := strings.Split(concrete(op, restA), "/")
		// parts[0] is empty and parts[1] is "v1": fuzz one of the others.
		parts[2+int(segIndex)%(len(parts)-2)] = escapeFramingBytes(segment)
		target := strings.Join(parts, "/") + "?" + escapeFramingBytes(key) + "=" + escapeFramingBytes(value)
		r := conn.send(t, g, op.Method+" "+target+" HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer "+tok+"\r\nContent-Length: 0\r\n\r\n")
		if r.status >= 500 {
			t.Fatalf("%s %q: %d %s", op.Method, target, r.status, r.body)
		}
		if r.header.Get("X-Request-Id") == "" || r.header.Get("RateLimit-Policy") == "" {
			t.Fatalf("%s %q: edge headers missing: %v", op.Method, target, r.header)
		}
		if r.status >= 400 && (r.code() == "" || r.env["request_id"] != r.header.Get("X-Request-Id")) {
			t.Fatalf("%s %q: not the envelope: %d %s", op.Method, target, r.status, r.body)
		}
		if m := leaks.Find(r.body); m != nil {
			t.Fatalf("%s %q: the answer shows %q: %s", op.Method, target, m, r.body)
		}
		for _, sent := range []string{segment, key, value} {
			// A parameter name shaped like the API's own (snake_case) is named back.
			if len(sent) >= 12 && strings.Contains(string(r.body), sent) && !(sent == key && parameterName.MatchString(key)) {
				t.Fatalf("%s %q: the answer quotes the request: %s", op.Method, target, r.body)
			}
		}
		if last := e.services.last(); last != nil && r.status == http.StatusOK && !utf8.ValidString(last.URL.RawQuery+last.URL.Path) {
			t.Fatalf("%s %q reached the service as %q", op.Method, target, last.URL.String())
		}
	})
}

var parameterName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// escapeFramingBytes percent-encodes only what would end the request line
// (controls, space, '?' and '#'), so every other byte, malformed escapes
// included, reaches the gateway as sent.
func escapeFramingBytes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c == 0x7f || c == '?' || c == '#' {
			b.WriteString("%")
			b.WriteString(strings.ToUpper(string("0123456789abcdef"[c>>4]) + string("0123456789abcdef"[c&15])))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
