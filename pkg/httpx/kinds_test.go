package httpx_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/fault"
	"partnerapi.dev/pkg/httpx"
)

type missingMenu struct{}

func (missingMenu) Error() string    { return "menu 7 does not exist" }
func (missingMenu) Kind() fault.Kind { return fault.NotFound }

// A handler returns its domain's errors; the one mapping answers by kind.
func TestWriteErrorByKind(t *testing.T) {
	errs := map[string]error{
		"invalid":  fmt.Errorf("parse: %w", fault.New(fault.Invalid, "limit: must be 1 to 200")),
		"notfound": fmt.Errorf("load: %w", missingMenu{}),
		"conflict": fault.New(fault.Conflict, "A resource with this id already exists."),
		"down":     fault.New(fault.Unavailable, "the database is unavailable"),
		"disabled": fault.New(fault.CapabilityDisabled, "imports are switched off"),
	}
	app := httpx.New(httpx.Options{Name: "test", NoTracing: true}, func(r fiber.Router) {
		h := func(c *fiber.Ctx) error { return errs[c.Params("kind")] }
		r.Get("/v1/:kind", h)
		r.Post("/v1/:kind", h)
	})
	for _, tc := range []struct {
		method, kind string
		status       int
		code, msg    string
	}{
		{"GET", "invalid", 400, httpx.CodeInvalidRequest, "limit: must be 1 to 200"},
		{"GET", "notfound", 404, httpx.CodeNotFound, httpx.NotFound().Message},
		{"POST", "conflict", 409, httpx.CodeConflict, "A resource with this id already exists."},
		{"GET", "down", 503, httpx.CodeServiceUnavailable, httpx.Unavailable(false).Message},
		{"POST", "down", 503, httpx.CodeCapabilityDisabled, httpx.Unavailable(true).Message},
		{"GET", "disabled", 503, httpx.CodeCapabilityDisabled, httpx.Unavailable(true).Message},
	} {
		t.Run(tc.method+" "+tc.kind, func(t *testing.T) {
			resp, env, raw := do(t, app, tc.method, "/v1/"+tc.kind, "")
			if resp.StatusCode != tc.status || env.Error != tc.code || env.Message != tc.msg || env.RequestID == "" {
				t.Fatalf("%d %s", resp.StatusCode, raw)
			}
			if resp.StatusCode == http.StatusInternalServerError {
				t.Fatal("a kind became a 500")
			}
		})
	}
}

// An error's recovery fields join the envelope; they never replace its
// own members.
func TestWriteErrorWithFields(t *testing.T) {
	app := httpx.New(httpx.Options{Name: "test", NoTracing: true}, func(r fiber.Router) {
		r.Get("/v1/feed", func(c *fiber.Ctx) error {
			return httpx.CursorExpired("Read from after=11.", map[string]any{"oldestSeq": 12, "error": "forged", "request_id": "forged"})
		})
	})
	resp, env, raw := do(t, app, "GET", "/v1/feed", "")
	if resp.StatusCode != http.StatusGone || env.Error != httpx.CodeCursorExpired || env.Message != "Read from after=11." ||
		env.RequestID == "" || env.RequestID == "forged" || !strings.Contains(raw, `"oldestSeq":12`) {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
}
