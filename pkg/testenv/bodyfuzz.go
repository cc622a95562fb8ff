package testenv

import (
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"partnerapi.dev/pkg/jsontext"
)

// Write is one partner write a body fuzz target sends: a concrete path and
// a valid body. In Body, each {KEY} becomes a fresh idempotency key per
// request, so writes reach the database instead of replaying.
type Write struct {
	Method, Path string
	Body         string
}

// Send serves one request and answers its status and body.
type Send func(t *testing.T, method, path string, body []byte) (status int, answer []byte)

// hostile is text the seeds put into every string of every write.
var hostile = []string{`\u0000`, "a\x00b", "\xff\xfe", "\xc3\x28", `\ud800`, "\xed\xa0\x80", `\"`, "'; --", strings.Repeat("€", 300), ""}

// leak is what an answer must never show: Go and Postgres internals.
var leak = regexp.MustCompile(`goroutine|panic|SQLSTATE|\.go:\d|pq:|pgx|gorm|relation "|column "|invalid byte sequence|unsupported Unicode`)

// FuzzWriteBodies fuzzes the bodies of writes: one string of a write's
// valid body replaced by arbitrary bytes (inserted between the quotes as
// they are, so escapes, NUL, invalid UTF-8 and broken JSON all arrive), or
// the whole body arbitrary. Every answer must be below 500, an error must
// be the envelope with a request id, and no answer may show internals or,
// when an error, quote the text sent.
func FuzzWriteBodies(f *testing.F, writes []Write, send Send) {
	f.Helper()
	for i, w := range writes {
		// Each string gets a NUL and one more of the hostile texts. The
		// plain test run checks those seeds; a fuzzing run starts from the
		// whole bodies only, because it replays every seed inside -fuzztime
		// before it mutates anything (a catalog document alone has hundreds
		// of strings).
		strs := strings.Count(w.Body, `"`) / 2
		if fuzzing() {
			strs = 0
		}
		for j := range strs {
			f.Add(uint8(i), uint8(j), hostile[0], false)
			f.Add(uint8(i), uint8(j), hostile[1+j%(len(hostile)-1)], false)
		}
		f.Add(uint8(i), uint8(0), w.Body, true)
		f.Add(uint8(i), uint8(0), `{"idempotencyKey": 12}`, true)
	}
	f.Fuzz(func(t *testing.T, op, field uint8, text string, whole bool) {
		w := writes[int(op)%len(writes)]
		body := text
		if !whole {
			body = replaceString(w.Body, int(field), text)
		}
		for strings.Contains(body, "{KEY}") {
			body = strings.Replace(body, "{KEY}", newKey(), 1)
		}
		status, answer := send(t, w.Method, w.Path, []byte(body))
		if status >= 500 {
			t.Fatalf("%s %s %q: %d %s", w.Method, w.Path, body, status, answer)
		}
		if m := leaked(answer, body); m != "" {
			t.Fatalf("%s %s %q: the answer shows %q: %s", w.Method, w.Path, body, m, answer)
		}
		if status < 400 {
			return
		}
		var env struct {
			Error     string `json:"error"`
			Message   string `json:"message"`
			RequestID string `json:"request_id"`
		}
		if err := json.Unmarshal(answer, &env); err != nil || env.Error == "" || env.RequestID == "" {
			t.Fatalf("%s %s %q: not the envelope: %d %s", w.Method, w.Path, body, status, answer)
		}
		if echo := quoted(env.Message, text); echo != "" {
			t.Fatalf("%s %s %q: the error quotes the request (%q): %s", w.Method, w.Path, body, echo, answer)
		}
	})
}

// leaked is the first internal the answer shows that the request did not
// send: a field name such as "xgorm" is quoted back as the request spelled
// it, which is the API's own words, not a leak.
func leaked(answer []byte, body string) string {
	for _, m := range leak.FindAll(answer, -1) {
		if !strings.Contains(body, string(m)) {
			return string(m)
		}
	}
	return ""
}

// fuzzing reports whether this run fuzzes (go test -fuzz) rather than
// checking the seed corpus.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// replaceString puts text, as raw bytes, in place of the n-th string
// (key or value, counted modulo their number) of body.
func replaceString(body string, n int, text string) string {
	var spans [][2]int
	for i := 0; i < len(body); i++ {
		if body[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(body) && body[j] != '"' {
			if body[j] == '\\' {
				j++
			}
			j++
		}
		spans = append(spans, [2]int{i + 1, j})
		i = j
	}
	if len(spans) == 0 {
		return body
	}
	s := spans[n%len(spans)]
	return body[:s[0]] + text + body[min(s[1], len(body)):]
}

// quoted reports text sent (12 bytes or more) that the message shows,
// unless it is only letters, digits, spaces and the characters of a JSON
// path: the API's own words and field names are not echoes.
func quoted(message, text string) string {
	const plain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.[]_- "
	if len(text) >= 12 && strings.Contains(message, text) && strings.Trim(text, plain) != "" {
		return text
	}
	return ""
}

func newKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// CheckWrongTypes sends each write once per value of its valid body, that
// value replaced by one of another JSON type, and expects a 400 whose
// message names the value's path as the body spells it
// (document.menuItems[0].name) and no Go name.
func CheckWrongTypes(t *testing.T, writes []Write, send Send) {
	t.Helper()
	for _, w := range writes {
		body := strings.ReplaceAll(w.Body, "{KEY}", newKey())
		type value struct {
			path       string
			start, end int64
			wrong      string
		}
		var values []value
		start := int64(0)
		jsontext.Walk([]byte(body), func(tok jsontext.Token) bool {
			defer func() { start = tok.End }()
			if tok.Key || len(tok.Path) == 0 {
				return true
			}
			wrong := `7`
			switch v := tok.Value.(type) {
			case json.Number, bool:
				wrong = `"x"`
			case json.Delim:
				if v == '{' || v == '[' {
					wrong = `"x"`
				}
			case nil:
				return true
			}
			values = append(values, value{tok.Path.String(), start, tok.End, wrong})
			return true
		})
		for _, v := range values {
			// The value follows the ':' or ',' after the token before it
			// (and the brackets that closed), or the '[' it ends with.
			at := v.start
			for at < int64(len(body)) && strings.IndexByte(" \t\r\n}]", body[at]) >= 0 {
				at++
			}
			if body[at] == ':' || body[at] == ',' {
				at++
			}
			end := v.end
			if c := body[end-1]; c == '{' || c == '[' {
				end = matchingClose(body, end-1)
			}
			sent := body[:at] + v.wrong + body[end:]
			status, answer := send(t, w.Method, w.Path, []byte(sent))
			var env struct{ Message string }
			_ = json.Unmarshal(answer, &env)
			if status != 400 || !strings.HasPrefix(env.Message, v.path+" must be ") {
				t.Errorf("%s %s with %s = %s: %d %s", w.Method, w.Path, v.path, v.wrong, status, answer)
			}
		}
	}
}

// matchingClose is the offset after the bracket closing the one at open.
func matchingClose(s string, open int64) int64 {
	depth, inString := 0, false
	for i := open; i < int64(len(s)); i++ {
		switch c := s[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return int64(len(s))
}
