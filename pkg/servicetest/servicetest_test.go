package servicetest_test

import (
	"net/http"
	"testing"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/servicetest"
)

// The client signs the grant and tenant it is given, says a body is JSON
// unless told otherwise, and decodes both envelopes.
func TestClientSignsSendsAndDecodes(t *testing.T) {
	keys := servicetest.Keys(t)
	app := fiber.New()
	app.Post("/internal/echo", func(c *fiber.Ctx) error {
		ic, err := keys.Verify(c.Get(internalctx.Header))
		if err != nil {
			return c.Status(http.StatusUnauthorized).JSON(httpx.Envelope{Error: "invalid_token", Message: err.Error()})
		}
		return httpx.Data(c, map[string]any{"client": ic.ClientID, "scopes": ic.Scopes, "zone": ic.Tenant.TimeZone,
			"type": c.Get("Content-Type"), "body": string(c.Body())})
	})
	c := servicetest.NewClient(t, app, keys, "svc.menu.read")
	c.Tenants = map[string]internalctx.Tenant{"ny": {ID: "ny", TimeZone: "America/New_York", Currency: "USD", Country: "US"}}
	type echo struct {
		Client, Zone, Type, Body string
		Scopes                   []string
	}
	got := servicetest.Must[echo](c, http.StatusOK, http.MethodPost, "/internal/echo", "ny", map[string]int{"a": 1})
	if got.Client != "client-1" || got.Zone != "America/New_York" || got.Type != "application/json" || got.Body != `{"a":1}` ||
		len(got.Scopes) != 1 || got.Scopes[0] != "svc.menu.read" {
		t.Fatalf("%+v", got)
	}
	if got := servicetest.Must[echo](c, http.StatusOK, http.MethodPost, "/internal/echo", "fi", nil); got.Zone != "Europe/Helsinki" || got.Type != "" {
		t.Fatalf("a tenant not listed: %+v", got)
	}
	status, raw := c.Do(http.MethodPost, "/internal/echo", "fi", "x\n", map[string]string{"Content-Type": "application/x-ndjson"})
	if a := servicetest.Decode[echo](t, status, raw); a.Data.Type != "application/x-ndjson" || a.Data.Body != "x\n" {
		t.Fatalf("%+v", a)
	}
	if msg := servicetest.Refused(c, http.StatusUnauthorized, http.MethodPost, "/internal/echo", "", nil); msg[:14] != "invalid_token:" {
		t.Fatalf("refused: %s", msg)
	}
}
