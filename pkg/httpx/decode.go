package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// DecodeJSON decodes the request body into v. Unknown fields, trailing data,
// a wrong type or malformed JSON answer 400 with a message naming the problem.
func DecodeJSON(c *fiber.Ctx, v any) error {
	ct := c.Get(fiber.HeaderContentType)
	if ct != "" && !strings.HasPrefix(strings.ToLower(ct), fiber.MIMEApplicationJSON) {
		return BadRequest("Send the body as application/json.")
	}
	return Decode(c.Body(), v)
}

// Decode is DecodeJSON for a body already read.
func Decode(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return BadRequest("The request body is empty; send a JSON object.")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return BadRequest("%s", describeDecodeError(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return BadRequest("The request body has data after the JSON object.")
	}
	return nil
}

func describeDecodeError(err error) string {
	var syntax *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("The request body is not valid JSON (at byte %d).", syntax.Offset)
	case errors.As(err, &typeErr):
		if typeErr.Field != "" {
			return fmt.Sprintf("Field %q must be of type %s.", typeErr.Field, jsonType(typeErr.Type.Kind().String()))
		}
		return fmt.Sprintf("The request body must be a JSON %s.", jsonType(typeErr.Type.Kind().String()))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "The request body ends before the JSON is complete."
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Sprintf("Field %s is not allowed here.", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return "The request body is not valid JSON."
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "map", "struct", "ptr":
		return "object"
	case "float32", "float64":
		return "number"
	}
	if strings.HasPrefix(kind, "int") || strings.HasPrefix(kind, "uint") {
		return "integer"
	}
	return kind
}
