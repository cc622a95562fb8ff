package httpx_test

import (
	"io"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/httpx"
)

// RequireBearer admits only the configured token; an empty one admits
// nothing. Data wraps the answer in the envelope.
func TestRequireBearerAndData(t *testing.T) {
	for _, want := range []string{"ingest-token-0123456789", ""} {
		app := httpx.New(httpx.Options{NoTracing: true}, func(r fiber.Router) {
			r.Post("/ingest", func(c *fiber.Ctx) error {
				if err := httpx.RequireBearer(c, want, "ingestion token"); err != nil {
					return err
				}
				return httpx.Data(c.Status(201), map[string]int{"stored": 1})
			})
		})
		for auth, ok := range map[string]bool{"Bearer ingest-token-0123456789": want != "", "Bearer ": false, "ingest-token-0123456789": false, "Bearer ingest-token-012345678": false, "": false} {
			req := httptest.NewRequest("POST", "/ingest", nil)
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := app.Test(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			if ok && (resp.StatusCode != 201 || string(body) != `{"data":{"stored":1}}`) || !ok && resp.StatusCode != 401 {
				t.Errorf("token %q, Authorization %q: %d %s", want, auth, resp.StatusCode, body)
			}
		}
	}
}
