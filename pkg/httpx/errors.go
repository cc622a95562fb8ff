// Package httpx builds the Fiber applications every process serves: the error
// envelope, request ids, panic recovery, strict JSON decoding and body limits.
package httpx

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/fault"
)

// Error codes of the public error envelope.
const (
	CodeInvalidRequest       = "invalid_request"
	CodeInvalidToken         = "invalid_token"
	CodeInsufficientScope    = "insufficient_scope"
	CodeNotFound             = "not_found"
	CodeMethodNotAllowed     = "method_not_allowed"
	CodeConflict             = "conflict"
	CodePayloadTooLarge      = "payload_too_large"
	CodeRateLimited          = "rate_limited"
	CodeInternal             = "internal_error"
	CodeServiceUnavailable   = "service_unavailable"
	CodeCapabilityDisabled   = "capability_disabled"
	CodeUnsupportedMediaType = "unsupported_media_type"
	CodeCursorExpired        = "cursor_expired"
)

// Error is an error that knows its HTTP answer. Message is shown to the caller
// as "message"; Description, used by the OAuth-style codes, as
// "error_description".
type Error struct {
	Status      int
	Code        string
	Message     string
	Description string
	Header      map[string]string
	// Fields are extra members of the envelope that tell the caller how to
	// recover (e.g. oldestSeq of cursor_expired); they never replace the
	// envelope's own members.
	Fields map[string]any
}

func (e *Error) Error() string {
	if e.Message != "" {
		return e.Code + ": " + e.Message
	}
	return e.Code + ": " + e.Description
}

// Envelope is the JSON body of every error response.
type Envelope struct {
	Error            string `json:"error"`
	RequestID        string `json:"request_id"`
	Message          string `json:"message,omitempty"`
	ErrorDescription string `json:"error_description,omitempty"`
}

// BadRequest answers 400 invalid_request with a message saying what to change.
func BadRequest(format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Message: fmt.Sprintf(format, args...)}
}

// NotFound answers 404 not_found. The message is deliberately the same for
// every resource, so existence outside an authorization cannot be probed.
func NotFound() *Error {
	return &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: "The requested resource does not exist or is outside the authorization."}
}

// Conflict answers 409 conflict.
func Conflict(format string, args ...any) *Error {
	return &Error{Status: http.StatusConflict, Code: CodeConflict, Message: fmt.Sprintf(format, args...)}
}

// Unavailable answers 503 service_unavailable (reads) or capability_disabled
// (writes).
func Unavailable(write bool) *Error {
	if write {
		return &Error{Status: http.StatusServiceUnavailable, Code: CodeCapabilityDisabled, Message: "This capability is temporarily unavailable. No change was made; retry later."}
	}
	return &Error{Status: http.StatusServiceUnavailable, Code: CodeServiceUnavailable, Message: "A required service is temporarily unavailable. Retry later."}
}

// Internal answers 500 with no internals.
func Internal() *Error {
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: "An unexpected error occurred. Quote the request id to support."}
}

// PayloadTooLarge answers 413.
func PayloadTooLarge(limit int) *Error {
	return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodePayloadTooLarge, Message: fmt.Sprintf("The request body exceeds %d bytes.", limit)}
}

// MethodNotAllowed answers 405 with the Allow header.
func MethodNotAllowed(allow string) *Error {
	return &Error{Status: http.StatusMethodNotAllowed, Code: CodeMethodNotAllowed, Message: "This method is not allowed on this path.", Header: map[string]string{fiber.HeaderAllow: allow}}
}

// WriteError answers err as the error envelope: an *Error as it is (answers
// that need headers, such as challenges and Allow), an error of a fault kind
// through FromKind, a Fiber error by its status; anything else becomes a 500
// whose body reveals nothing.
func WriteError(c *fiber.Ctx, err error) error {
	var e *Error
	if !errors.As(err, &e) {
		var fe *fiber.Error
		if kind, declared := fault.Of(err); kind != fault.Unknown {
			e = FromKind(kind, declared, isWrite(c.Method()))
		} else if errors.As(err, &fe) {
			e = fromFiber(fe)
		} else {
			slog.ErrorContext(c.UserContext(), "request failed", "error", err)
			e = Internal()
		}
	}
	for k, v := range e.Header {
		c.Set(k, v)
	}
	env := Envelope{
		Error:            e.Code,
		RequestID:        RequestID(c),
		Message:          e.Message,
		ErrorDescription: e.Description,
	}
	if len(e.Fields) == 0 {
		return c.Status(e.Status).JSON(env)
	}
	body := make(map[string]any, len(e.Fields)+4)
	for k, v := range e.Fields {
		body[k] = v
	}
	body["error"], body["request_id"] = env.Error, env.RequestID
	if env.Message != "" {
		body["message"] = env.Message
	}
	if env.ErrorDescription != "" {
		body["error_description"] = env.ErrorDescription
	}
	return c.Status(e.Status).JSON(body)
}

// CursorExpired answers 410 cursor_expired: the position asked for is older
// than what is kept; fields say where the kept range starts.
func CursorExpired(message string, fields map[string]any) *Error {
	return &Error{Status: http.StatusGone, Code: CodeCursorExpired, Message: message, Fields: fields}
}

// FromKind is the one mapping from an error kind to an answer. declared is
// the error that declared the kind; its message is shown for invalid and
// conflict. write tells whether the request meant to change something: an
// outage then answers capability_disabled ("no change was made"), a read
// service_unavailable.
func FromKind(kind fault.Kind, declared error, write bool) *Error {
	switch kind {
	case fault.Invalid:
		return BadRequest("%s", declared.Error())
	case fault.NotFound:
		return NotFound()
	case fault.Conflict:
		return Conflict("%s", declared.Error())
	case fault.Unavailable:
		return Unavailable(write)
	case fault.CapabilityDisabled:
		return Unavailable(true)
	}
	return Internal()
}

func isWrite(method string) bool {
	return method != fiber.MethodGet && method != fiber.MethodHead && method != fiber.MethodOptions
}

func fromFiber(fe *fiber.Error) *Error {
	switch fe.Code {
	case http.StatusNotFound:
		return NotFound()
	case http.StatusMethodNotAllowed:
		return &Error{Status: fe.Code, Code: CodeMethodNotAllowed, Message: "This method is not allowed on this path."}
	case http.StatusRequestEntityTooLarge:
		return PayloadTooLarge(DefaultBodyLimit)
	case http.StatusUnsupportedMediaType:
		return &Error{Status: fe.Code, Code: CodeUnsupportedMediaType, Message: "Send the body as application/json."}
	case http.StatusServiceUnavailable:
		return Unavailable(false)
	}
	if fe.Code >= 400 && fe.Code < 500 {
		return &Error{Status: fe.Code, Code: CodeInvalidRequest, Message: fe.Message}
	}
	return Internal()
}
