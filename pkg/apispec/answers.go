package apispec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// answerSchemas checks answers (status, headers, body) against the
// responses an OpenAPI 3.1 document gives an operation, whose schemas are
// JSON Schema 2020-12. Each schema is compiled once, from the document
// itself, so references into components resolve where they are written:
// kin-openapi's openapi3filter.ValidateResponse compiles the body's schema
// and each header's again on every call, with a new compiler that compiles
// the meta-schema too, and that was most of the CPU of the services' tests.
type answerSchemas struct {
	doc map[string]any

	mu       sync.Mutex // compiler is not safe for concurrent use
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema // by JSON pointer into doc
}

// documentURL names the document inside the compiler; nothing is loaded
// from it.
const documentURL = "https://partnerapi.invalid/openapi.json"

func newAnswerSchemas(data []byte) (*answerSchemas, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("the document is not an object")
	}
	// A writeOnly property must not appear in an answer, which JSON Schema
	// leaves to the application: the document has none, and this keeps it so
	// rather than check a rule silently not enforced.
	if bytes.Contains(data, []byte(`"writeOnly"`)) {
		return nil, errors.New("the document uses writeOnly, which the answer check does not enforce")
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.RegisterFormat(&jsonschema.Format{Name: "int64", Validate: int64Format})
	if err := c.AddResource(documentURL, doc); err != nil {
		return nil, err
	}
	return &answerSchemas{doc: root, compiler: c, compiled: map[string]*jsonschema.Schema{}}, nil
}

// check checks an answer of the operation at pathTemplate (as the document
// spells it) and method.
func (a *answerSchemas) check(pathTemplate, method string, status int, header http.Header, body []byte) error {
	ptr, resp, err := a.response(pathTemplate, method, status)
	if err != nil {
		return err
	}
	if err := a.checkHeaders(ptr, resp, header); err != nil {
		return err
	}
	content, _ := resp["content"].(map[string]any)
	if len(content) == 0 {
		return nil
	}
	mediaType, _, err := mime.ParseMediaType(header.Get("Content-Type"))
	if err != nil {
		return fmt.Errorf("status %d: Content-Type %q: %w", status, header.Get("Content-Type"), err)
	}
	key := mediaType
	if _, ok := content[key]; !ok {
		key = strings.Split(mediaType, "/")[0] + "/*"
	}
	if _, ok := content[key]; !ok {
		key = "*/*"
	}
	if _, ok := content[key]; !ok {
		return fmt.Errorf("status %d: Content-Type %q is not documented", status, mediaType)
	}
	if _, ok := content[key].(map[string]any)["schema"]; !ok {
		return nil
	}
	value, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("status %d: the body is not JSON: %w", status, err)
	}
	schema, err := a.schema(ptr + "/content/" + escape(key) + "/schema")
	if err != nil {
		return err
	}
	if err := schema.Validate(value); err != nil {
		return fmt.Errorf("status %d: the body does not match its schema: %w", status, err)
	}
	return nil
}

// response is the response object the document gives the operation for
// status (the code, then its class such as 2XX, then default), and the
// JSON pointer to it.
func (a *answerSchemas) response(pathTemplate, method string, status int) (string, map[string]any, error) {
	ptr := "/paths/" + escape(pathTemplate) + "/" + strings.ToLower(method) + "/responses"
	responses, ok := a.at(ptr).(map[string]any)
	if !ok {
		return "", nil, fmt.Errorf("%s %s has no responses in the document", method, pathTemplate)
	}
	code := strconv.Itoa(status)
	for _, key := range []string{code, code[:1] + "XX", "default"} {
		if _, ok := responses[key]; ok {
			return a.resolve(ptr + "/" + key)
		}
	}
	return "", nil, fmt.Errorf("status %d is not documented for %s %s", status, method, pathTemplate)
}

func (a *answerSchemas) checkHeaders(ptr string, resp map[string]any, header http.Header) error {
	headers, _ := resp["headers"].(map[string]any)
	for name := range headers {
		if strings.EqualFold(name, "Content-Type") {
			continue
		}
		hptr, h, err := a.resolve(ptr + "/headers/" + escape(name))
		if err != nil {
			return err
		}
		values := header.Values(name)
		if len(values) == 0 {
			if required, _ := h["required"].(bool); required {
				return fmt.Errorf("header %s is missing", name)
			}
			continue
		}
		if _, ok := h["schema"]; !ok {
			continue
		}
		if s, _ := h["schema"].(map[string]any); s["type"] != "string" {
			return fmt.Errorf("header %s: only string schemas are checked", name)
		}
		schema, err := a.schema(hptr + "/schema")
		if err != nil {
			return err
		}
		if err := schema.Validate(values[0]); err != nil {
			return fmt.Errorf("header %s: %w", name, err)
		}
	}
	return nil
}

// resolve is the object at ptr, following one $ref within the document.
func (a *answerSchemas) resolve(ptr string) (string, map[string]any, error) {
	obj, ok := a.at(ptr).(map[string]any)
	if !ok {
		return "", nil, fmt.Errorf("%s is not an object in the document", ptr)
	}
	ref, ok := obj["$ref"].(string)
	if !ok {
		return ptr, obj, nil
	}
	target, ok := a.at(strings.TrimPrefix(ref, "#")).(map[string]any)
	if !strings.HasPrefix(ref, "#/") || !ok {
		return "", nil, fmt.Errorf("%s: $ref %s is not an object in the document", ptr, ref)
	}
	return strings.TrimPrefix(ref, "#"), target, nil
}

// at is the value at a JSON pointer into the document, or nil.
func (a *answerSchemas) at(ptr string) any {
	var v any = a.doc
	for _, token := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = obj[unescapeToken.Replace(token)]
	}
	return v
}

// schema compiles the schema at ptr once.
func (a *answerSchemas) schema(ptr string) (*jsonschema.Schema, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.compiled[ptr]; ok {
		return s, nil
	}
	s, err := a.compiler.Compile(documentURL + "#" + ptr)
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", ptr, err)
	}
	a.compiled[ptr] = s
	return s, nil
}

// JSON pointer tokens escape ~ and / (RFC 6901).
var (
	escapeToken   = strings.NewReplacer("~", "~0", "/", "~1")
	unescapeToken = strings.NewReplacer("~1", "/", "~0", "~")
)

// escape makes s one JSON pointer token.
func escape(s string) string { return escapeToken.Replace(s) }

// int64Format is OpenAPI's int64: an integer a signed 64-bit number holds.
func int64Format(v any) error {
	n, ok := v.(json.Number)
	if !ok {
		return nil
	}
	if _, err := strconv.ParseInt(n.String(), 10, 64); err != nil {
		return fmt.Errorf("%s is not a 64-bit integer", n)
	}
	return nil
}
