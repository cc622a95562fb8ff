package servicetest

import (
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"partnerapi.dev/pkg/apispec"
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
// value replaced by one of another JSON type, and then once per field its
// OpenAPI schema describes that the body leaves out, added with a value of
// the wrong type; and once per date, date-time and uuid string of the body
// with a value of the wrong format. Each must be a 400 whose message starts
// with the field's path as the body spells it (document.menuItems[0].name)
// and says what it must be, with no Go name.
func CheckWrongTypes(t *testing.T, writes []Write, send Send) {
	t.Helper()
	for _, w := range writes {
		body := strings.ReplaceAll(w.Body, "{KEY}", newKey())
		schema, err := apispec.RequestSchema(w.Method, w.Path)
		if err != nil {
			t.Fatal(err)
		}
		fields := schemaFields(schema)
		sent := map[string]int{}
		expect := func(body, path, what string) {
			t.Helper()
			sent[what[:strings.IndexByte(what, ' ')]]++
			status, answer := send(t, w.Method, w.Path, []byte(body))
			var env struct{ Message string }
			_ = json.Unmarshal(answer, &env)
			if status != 400 || !strings.HasPrefix(env.Message, path+" ") || !strings.Contains(env.Message, " must be ") {
				t.Errorf("%s %s with %s %s: %d %s", w.Method, w.Path, path, what, status, answer)
			}
		}
		type value struct {
			path       string
			start, end int64
			wrong      string
		}
		var values []value
		objects := map[string]int64{} // the offset after each object's '{', by schema path
		present := map[string]bool{}
		start := int64(0)
		jsontext.Walk([]byte(body), func(tok jsontext.Token) bool {
			defer func() { start = tok.End }()
			if d, ok := tok.Value.(json.Delim); ok && d == '{' && !tok.Key {
				if _, seen := objects[schemaPath(tok.Path)]; !seen {
					objects[schemaPath(tok.Path)] = tok.End
				}
			}
			if tok.Key || len(tok.Path) == 0 {
				return true
			}
			present[schemaPath(tok.Path)] = true
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
			case string:
				if f, ok := fields[schemaPath(tok.Path)]; ok && formatted(f) {
					values = append(values, value{tok.Path.String(), start, tok.End, `"not-a-` + f.Format + `"`})
				}
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
			expect(body[:at]+v.wrong+body[end:], v.path, "= "+v.wrong)
		}
		// The fields the sample leaves out, each added to its object.
		for path, f := range fields {
			parent, name := splitField(path)
			open, ok := objects[parent]
			if present[path] {
				continue
			}
			if !ok || name == "" {
				sent["unreached"]++
				continue
			}
			wrong := `7`
			if !f.Type.Includes("string") {
				wrong = `"x"`
			}
			sep := ","
			if strings.TrimSpace(body[open:])[0] == '}' {
				sep = ""
			}
			spelled := strings.ReplaceAll(path, "[]", "[0]")
			expect(body[:open]+`"`+name+`":`+wrong+sep+body[open:], spelled, "added as "+wrong)
		}
		t.Logf("%s %s: %d values of the body of another type or format, %d fields of the schema added, %d not reached (inside an object or array the body leaves out)",
			w.Method, w.Path, sent["="], sent["added"], sent["unreached"])
	}
}

// typed is what a field's schema says its value is: the schema itself when
// it has a type, or the one variant that is not null of a nullable oneOf or
// anyOf (NullableUuid); nil when that is not one type.
func typed(s *openapi3.Schema) *openapi3.Schema {
	if s == nil || s.Type != nil {
		return s
	}
	var found *openapi3.Schema
	for _, r := range append(s.OneOf, s.AnyOf...) {
		switch {
		case r.Value == nil || r.Value.Type == nil:
			return nil
		case r.Value.Type.Is("null"):
		case found != nil:
			return nil
		default:
			found = r.Value
		}
	}
	return found
}

// formatted reports a string field whose format the server checks.
func formatted(f *openapi3.Schema) bool {
	return f.Type.Includes("string") && (f.Format == "date" || f.Format == "date-time" || f.Format == "uuid")
}

// schemaPath is a body path with every array index as [], the way
// schemaFields names the fields.
func schemaPath(p jsontext.Path) string {
	var b strings.Builder
	for _, e := range p {
		switch e := e.(type) {
		case int:
			b.WriteString("[]")
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(e)
		}
	}
	return b.String()
}

// splitField splits a field's path into its object's path and its name
// ("" when the field is an array's items).
func splitField(path string) (parent, name string) {
	i := strings.LastIndexByte(path, '.')
	if strings.HasSuffix(path, "[]") {
		return path, ""
	}
	if i < 0 {
		return "", path
	}
	return path[:i], path[i+1:]
}

// schemaFields lists every field a body schema describes, by path with
// array items as [] (menuItems[].name), through allOf, oneOf and anyOf.
func schemaFields(s *openapi3.Schema) map[string]*openapi3.Schema {
	out := map[string]*openapi3.Schema{}
	var walk func(s *openapi3.Schema, at string, depth int)
	walk = func(s *openapi3.Schema, at string, depth int) {
		if s == nil || depth > 12 {
			return
		}
		for _, refs := range []openapi3.SchemaRefs{s.AllOf, s.OneOf, s.AnyOf} {
			for _, r := range refs {
				walk(r.Value, at, depth+1)
			}
		}
		for name, p := range s.Properties {
			path := name
			if at != "" {
				path = at + "." + name
			}
			if f := typed(p.Value); f != nil {
				out[path] = f
			}
			walk(p.Value, path, depth+1)
		}
		if s.Items != nil && s.Items.Value != nil {
			if f := typed(s.Items.Value); f != nil {
				out[at+"[]"] = f
			}
			walk(s.Items.Value, at+"[]", depth+1)
		}
	}
	walk(s, "", 0)
	return out
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
