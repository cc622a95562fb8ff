package httpx

import (
	"crypto/rand"
	"encoding/base32"
	"regexp"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/telemetry"
)

// HeaderRequestID carries the correlation id on every request and response.
const HeaderRequestID = "X-Request-Id"

const localsRequestID = "httpx.request_id"

var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// ValidRequestID reports whether an inbound id is kept as it is.
func ValidRequestID(id string) bool { return validRequestID.MatchString(id) }

// NewRequestID returns a fresh random id.
func NewRequestID() string {
	var b [15]byte
	_, _ = rand.Read(b[:])
	return "req_" + base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])
}

// requestIDMiddleware keeps a well-formed inbound X-Request-Id and replaces
// anything else, so the id in logs and error bodies is always safe to echo.
func requestIDMiddleware(c *fiber.Ctx) error {
	id := c.Get(HeaderRequestID)
	if !ValidRequestID(id) {
		id = NewRequestID()
	}
	c.Locals(localsRequestID, id)
	c.SetUserContext(telemetry.WithRequestID(c.UserContext(), id))
	c.Set(HeaderRequestID, id)
	return c.Next()
}

// RequestID returns the id of the request being served.
func RequestID(c *fiber.Ctx) string {
	if id, ok := c.Locals(localsRequestID).(string); ok {
		return id
	}
	return ""
}
