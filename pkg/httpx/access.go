package httpx

import (
	"context"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
)

const localsClientID = "httpx.client_id"

// SetClientID names the partner client a request was made for once it is
// known (the gateway after checking the token, a service after verifying the
// internal context), for the request's access line.
func SetClientID(c *fiber.Ctx, id string) { c.Locals(localsClientID, id) }

// accessLog writes the one line of a served request: method, route template
// (never the path with its identifiers nor the query), status, duration and
// partner client. Headers and bodies are never logged; trace, span and
// request ids come with ctx.
func accessLog(ctx context.Context, c *fiber.Ctx, route string, status int, took time.Duration) {
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
	}
	attrs := []slog.Attr{
		slog.String("method", c.Method()),
		slog.String("route", route),
		slog.Int("status", status),
		slog.Float64("duration_ms", float64(took.Microseconds())/1000),
	}
	if id, _ := c.Locals(localsClientID).(string); id != "" {
		attrs = append(attrs, slog.String("client_id", id))
	}
	slog.LogAttrs(ctx, level, "request", attrs...)
}

// RequireBearer answers 401 invalid_token unless the request's
// Authorization is "Bearer <want>", compared in constant time; an empty want
// refuses every request. what names the token in the answer ("ingestion
// token").
func RequireBearer(c *fiber.Ctx, want, what string) error {
	token, ok := strings.CutPrefix(c.Get(fiber.HeaderAuthorization), "Bearer ")
	if !ok || want == "" || subtle.ConstantTimeCompare([]byte(token), []byte(want)) != 1 {
		return &Error{Status: http.StatusUnauthorized, Code: CodeInvalidToken, Description: "Send the " + what + " as a bearer token."}
	}
	return nil
}

// Data writes v in the answer envelope every successful JSON answer has,
// {"data": v}, with the status already set on c (200 unless set).
func Data(c *fiber.Ctx, v any) error {
	return c.JSON(struct {
		Data any `json:"data"`
	}{v})
}
