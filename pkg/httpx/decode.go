package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/pkg/jsontext"
)

// DecodeJSON decodes the request body into v under the rules of Decode,
// after CheckJSONMediaType.
func DecodeJSON(c *fiber.Ctx, v any) error {
	if err := CheckJSONMediaType(c.Get(fiber.HeaderContentType)); err != nil {
		return err
	}
	return Decode(c.Body(), v)
}

// CheckJSONMediaType accepts a request Content-Type of exactly
// application/json, optionally with charset=utf-8 (type, parameter name and
// charset compared without regard to case, RFC 9110), or none; anything
// else is a 400.
func CheckJSONMediaType(contentType string) error {
	if contentType == "" {
		return nil
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err == nil && mt == fiber.MIMEApplicationJSON {
		cs, hasCharset := params["charset"]
		delete(params, "charset")
		if len(params) == 0 && (!hasCharset || strings.EqualFold(cs, "utf-8")) {
			return nil
		}
	}
	return BadRequest("Send the body as application/json (optionally with charset=utf-8).")
}

// Decode is DecodeJSON for a body already read: exactly one JSON value, no
// unknown field, every key and string UTF-8 text without NUL; a problem is
// a 400 naming the field as the request wrote it and what it must be.
func Decode(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return BadRequest("The request body is empty; send a JSON object.")
	}
	if err := CheckText(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return BadRequest("%s", describeDecodeError(body, reflect.TypeOf(v), err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return BadRequest("The request body has data after the JSON object.")
	}
	return nil
}

// CheckText is Decode's text rule alone, for a body read another way first:
// every key and string of body must be UTF-8 text without NUL, else a 400
// naming where.
func CheckText(body []byte) error {
	if bad := jsontext.Check(body); bad != nil {
		return BadRequest("%s", describeBadText(bad))
	}
	return nil
}

func describeBadText(bad *jsontext.ErrInvalid) string {
	const rule = "is not valid text: send UTF-8 without NUL characters."
	name := bad.Path.String()
	switch {
	case bad.Key && name != "":
		return "A field name in " + name + " " + rule
	case bad.Key:
		return "A field name " + rule
	case name != "":
		return name + " " + rule
	}
	return "A value in the request body " + rule
}

func describeDecodeError(body []byte, into reflect.Type, err error) string {
	var syntax *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	var dateErr *bizdate.ParseError
	var timeErr *time.ParseError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("The request body is not valid JSON (at byte %d).", syntax.Offset)
	case errors.As(err, &typeErr):
		if name := pathOfTypeError(body, typeErr); name != "" {
			return fmt.Sprintf("%s must be %s.", name, expected(typeErr.Type))
		}
		if typeErr.Field == "" {
			return fmt.Sprintf("The request body must be %s.", expected(typeErr.Type))
		}
		return fmt.Sprintf("A field of the request body must be %s.", expected(typeErr.Type))
	case errors.As(err, &dateErr):
		return fmt.Sprintf("%s must be %s.", nameOf(body, into, reflect.TypeFor[bizdate.Date](), isString(dateErr.Text), "A date in the request body"), expectedDate)
	case errors.As(err, &timeErr):
		// time.Time parses the string as written, escapes and all.
		text := timeErr.Value
		if u, err := strconv.Unquote(`"` + text + `"`); err == nil {
			text = u
		}
		return fmt.Sprintf("%s must be %s.", nameOf(body, into, reflect.TypeFor[time.Time](), isString(text), "A date-time in the request body"), expectedDateTime)
	case strings.HasPrefix(err.Error(), "Time.UnmarshalJSON"): // not a JSON string
		return fmt.Sprintf("%s must be %s.", nameOf(body, into, reflect.TypeFor[time.Time](), func(v json.Token) bool { _, s := v.(string); return !s }, "A date-time in the request body"), expectedDateTime)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "The request body ends before the JSON is complete."
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name, _ := strings.CutPrefix(err.Error(), "json: unknown field ")
		name = strings.Trim(name, `"`)
		if p := unknownFieldPath(body, into, name); p != "" {
			return fmt.Sprintf("Field %q is not allowed here.", p)
		}
		if p := (jsontext.Path{name}).String(); p != "" {
			return fmt.Sprintf("Field %q is not allowed here.", p)
		}
		return "The request body has a field that is not allowed here."
	}
	return "The request body is not valid JSON."
}

// pathOfTypeError names, as the request wrote it, the value encoding/json
// refused (its own Field uses Go names): the value ending at the error's
// offset (a scalar) or opening there (an object or array), when its key is
// the field's; else, as when a type's own UnmarshalJSON counted the offset
// within its value, the first value of that key and JSON type.
func pathOfTypeError(body []byte, e *json.UnmarshalTypeError) string {
	key := e.Field[strings.LastIndex(e.Field, ".")+1:]
	kind, _, _ := strings.Cut(e.Value, " ") // "number 1.5"
	keyOf := func(p jsontext.Path) string {
		for i := len(p) - 1; i >= 0; i-- {
			if k, ok := p[i].(string); ok {
				return k
			}
		}
		return ""
	}
	var atOffset, ofKey *jsontext.Path
	jsontext.Walk(body, func(t jsontext.Token) bool {
		if t.Key {
			return true
		}
		if t.End == e.Offset && atOffset == nil && keyOf(t.Path) == key {
			atOffset = &t.Path
		}
		if ofKey == nil && key != "" && keyOf(t.Path) == key && jsonKind(t.Value) == kind {
			ofKey = &t.Path
		}
		return atOffset == nil
	})
	switch {
	case atOffset != nil:
		return atOffset.String()
	case ofKey != nil:
		return ofKey.String()
	}
	return ""
}

// unknownFieldPath names, as the request wrote it, the first key called
// name whose object decodes into a struct without such a field (the one
// the decoder refused: it stops at the first, in document order), or "".
func unknownFieldPath(body []byte, into reflect.Type, name string) string {
	var found string
	jsontext.Walk(body, func(t jsontext.Token) bool {
		if key, _ := t.Value.(string); !t.Key || key != name { // a key token's Path is its object's
			return true
		}
		object := fieldType(into, t.Path)
		if object == nil || object.Kind() != reflect.Struct || structField(object, name) != nil {
			return true
		}
		found = append(slices.Clone(t.Path), name).String()
		return false
	})
	return found
}

// jsonKind is the JSON type of a token in encoding/json's words.
func jsonKind(v json.Token) string {
	switch v := v.(type) {
	case string:
		return "string"
	case json.Number, float64:
		return "number"
	case bool:
		return "bool"
	case json.Delim:
		if v == '{' {
			return "object"
		}
		return "array"
	}
	return "null"
}

// nameOf names the first value of body that is refused and decodes into a
// want (the decoder stops at the first value it refuses, in document
// order), or answers otherwise.
func nameOf(body []byte, into, want reflect.Type, refused func(json.Token) bool, otherwise string) string {
	name := otherwise
	jsontext.Walk(body, func(t jsontext.Token) bool {
		if t.Key || !refused(t.Value) || fieldType(into, t.Path) != want {
			return true
		}
		if n := t.Path.String(); n != "" {
			name = n
		}
		return false
	})
	return name
}

// isString matches the string value text.
func isString(text string) func(json.Token) bool {
	return func(v json.Token) bool { s, ok := v.(string); return ok && s == text }
}

// fieldType is the Go type a value at path decodes into (pointers
// removed), or nil: struct fields by their JSON name, promoted fields of
// embedded structs included.
func fieldType(t reflect.Type, path jsontext.Path) reflect.Type {
	for _, e := range path {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t == nil {
			return nil
		}
		switch e := e.(type) {
		case int:
			if k := t.Kind(); k != reflect.Slice && k != reflect.Array {
				return nil
			}
			t = t.Elem()
		case string:
			switch t.Kind() {
			case reflect.Map:
				t = t.Elem()
			case reflect.Struct:
				t = structField(t, e)
			default:
				return nil
			}
		}
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// structField is the type of the field of struct t that the JSON key name
// decodes into, or nil.
func structField(t reflect.Type, name string) reflect.Type {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-":
		case tag == name || tag == "" && strings.EqualFold(f.Name, name) && !f.Anonymous:
			return f.Type
		case f.Anonymous && tag == "":
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				if ft := structField(et, name); ft != nil {
					return ft
				}
			}
		}
	}
	return nil
}

const (
	expectedDate     = "a YYYY-MM-DD date"
	expectedDateTime = "an RFC 3339 date-time (2026-11-15T09:30:00Z)"
)

// expected says what a value decoded into t must be, in JSON's words.
func expected(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case reflect.TypeFor[bizdate.Date]():
		return expectedDate
	case reflect.TypeFor[time.Time]():
		return expectedDateTime
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	}
	return "of another type"
}
