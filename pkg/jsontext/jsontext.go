// Package jsontext finds text in a JSON document that is not UTF-8 without
// NUL, and names where it is as the sender wrote it. encoding/json silently
// turns invalid UTF-8 and unpaired surrogate escapes into U+FFFD, and
// Postgres refuses NUL in text, so such text is found before decoding.
package jsontext

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MarkInvalid rewrites, inside JSON strings, each invalid UTF-8
// sequence and each unpaired surrogate escape as the escape \u0000. It
// returns line unchanged and -1 when there is none, else the offset of the
// first one in line.
func MarkInvalid(line string) (string, int) {
	var b strings.Builder
	firstBad, done := -1, 0
	mark := func(from, to int) {
		if firstBad < 0 {
			firstBad = from
			b.Grow(len(line) + 16)
		}
		b.WriteString(line[done:from])
		b.WriteString(`\u0000`)
		done = to
	}
	inString := false
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(line[i:])
			if r == utf8.RuneError && size == 1 && inString {
				mark(i, i+1)
			}
			i += size
		case !inString:
			inString = c == '"'
			i++
		case c == '"':
			inString = false
			i++
		case c == '\\' && i+1 < len(line) && line[i+1] == 'u':
			hi, ok := hex4(line, i+2)
			switch {
			case !ok:
				i += 2 // malformed: encoding/json reports it
			case hi >= 0xD800 && hi < 0xDC00:
				if lo, ok := hex4(line, i+8); ok && line[i+6] == '\\' && line[i+7] == 'u' && lo >= 0xDC00 && lo < 0xE000 {
					i += 12
				} else {
					mark(i, i+6)
					i += 6
				}
			case hi >= 0xDC00 && hi < 0xE000:
				mark(i, i+6)
				i += 6
			default:
				i += 6
			}
		case c == '\\':
			i += 2
		default:
			i++
		}
	}
	if firstBad < 0 {
		return line, -1
	}
	b.WriteString(line[done:])
	return b.String(), firstBad
}

// hex4 reads four hex digits at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// Path locates a value in a document: object keys and array indexes.
type Path []any

// String is the path as the sender wrote it (document.menuItems[2].name),
// or "" when a key is not shaped like a field name, so that arbitrary
// request bytes are never quoted back.
func (p Path) String() string {
	var b strings.Builder
	for _, e := range p {
		switch e := e.(type) {
		case int:
			b.WriteString("[" + strconv.Itoa(e) + "]")
		case string:
			if !fieldName.MatchString(e) {
				return ""
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(e)
		}
	}
	return b.String()
}

// fieldName is the shape of the API's field names.
var fieldName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

// Token is one token of a document: a value (a scalar, or the opening
// delimiter of an object or array) or an object key.
type Token struct {
	Path  Path
	Value json.Token
	Key   bool
	// End is the offset just after the token.
	End int64
}

// Walk calls visit for each key and value of doc in order until visit
// returns false. It stops silently at the first syntax error: the decoder
// reports those.
func Walk(doc []byte, visit func(Token) bool) {
	type frame struct {
		object bool
		key    string
		index  int
		keyed  bool // an object frame whose next token is a key
	}
	var stack []frame
	path := func() Path {
		p := make(Path, len(stack))
		for i, f := range stack {
			if f.object {
				p[i] = f.key
			} else {
				p[i] = f.index
			}
		}
		return p
	}
	done := func() { // a value ended in the innermost container
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].keyed = true
			} else {
				stack[n-1].index++
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		n := len(stack)
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:n-1]
			done()
			continue
		}
		if n > 0 && stack[n-1].keyed {
			k, _ := tok.(string)
			stack[n-1].key, stack[n-1].keyed = k, false
			if !visit(Token{Path: path()[:n-1], Value: tok, Key: true, End: dec.InputOffset()}) {
				return
			}
			continue
		}
		if !visit(Token{Path: path(), Value: tok, End: dec.InputOffset()}) {
			return
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, frame{object: d == '{', keyed: d == '{'})
			continue
		}
		done()
	}
}

// ErrInvalid is the error of Check.
type ErrInvalid struct {
	// Path is where the text is; Key means the text is a key in the
	// object at Path.
	Path Path
	Key  bool
}

func (e *ErrInvalid) Error() string {
	return "text that is not UTF-8 without NUL at " + e.Path.String()
}

// Check finds the first key or string value of doc that is not valid UTF-8
// or contains NUL (including unpaired surrogate escapes). A problem inside
// a document that is not valid JSON is left to the decoder.
func Check(doc []byte) *ErrInvalid {
	marked, _ := MarkInvalid(string(doc))
	if !strings.Contains(marked, `\u0000`) {
		return nil
	}
	var found *ErrInvalid
	Walk([]byte(marked), func(t Token) bool {
		if s, ok := t.Value.(string); ok && strings.ContainsRune(s, 0) {
			found = &ErrInvalid{Path: t.Path, Key: t.Key}
		}
		return found == nil
	})
	return found
}
