package internalctx_test

import (
	"encoding/base64"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/internalctx"
)

func key(id, fill string) string {
	return id + ":" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat(fill, 32)))
}

func TestSignVerifyAndRotation(t *testing.T) {
	old, err := internalctx.ParseKeys(key("k1", "a"))
	if err != nil {
		t.Fatal(err)
	}
	both, _ := internalctx.ParseKeys(key("k2", "b") + "," + key("k1", "a"))
	onlyNew, _ := internalctx.ParseKeys(key("k2", "b"))
	ctx := internalctx.Context{ClientID: "c", UserID: "u", GrantID: "g", Scopes: []string{"svc.orders.read"},
		Tenant: &internalctx.Tenant{ID: "r", TimeZone: "Europe/Helsinki", DayStartHour: 4, Currency: "EUR", Country: "FI"}, RequestID: "req-1"}

	signedOld := old.Sign(ctx)
	got, err := both.Verify(signedOld)
	if err != nil || got.Tenant.TimeZone != "Europe/Helsinki" || !got.HasScope("svc.orders.read") {
		t.Fatalf("rotation: old key not accepted: %v %+v", err, got)
	}
	if _, err := onlyNew.Verify(signedOld); err == nil {
		t.Fatal("retired key accepted")
	}
	signedNew := both.Sign(ctx)
	if !strings.HasPrefix(signedNew, "v1.k2.") {
		t.Fatalf("signs with first key: %s", signedNew)
	}
	parts := strings.Split(signedNew, ".")
	tampered := parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"cid":"evil"}`)) + "." + parts[3]
	for _, bad := range []string{"", "v1", tampered, strings.Replace(signedNew, "v1.", "v2.", 1), signedNew + "x"} {
		if _, err := both.Verify(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestParseKeysErrors(t *testing.T) {
	for _, spec := range []string{"", "nokey", "k:!!!", "k:" + base64.StdEncoding.EncodeToString([]byte("short")), "a.b:" + base64.StdEncoding.EncodeToString(make([]byte, 32))} {
		if _, err := internalctx.ParseKeys(spec); err == nil {
			t.Errorf("ParseKeys(%q) accepted", spec)
		}
	}
}

func TestRequireMiddleware(t *testing.T) {
	ring, _ := internalctx.ParseKeys(key("k1", "a"))
	app := httpx.New(httpx.Options{NoTracing: true}, func(r fiber.Router) {
		r.Get("/v1/x", internalctx.Require(ring), func(c *fiber.Ctx) error { return c.SendString(internalctx.From(c).ClientID) })
	})
	req := httptest.NewRequest("GET", "/v1/x", nil)
	resp, _ := app.Test(req)
	if resp.StatusCode != 401 {
		t.Fatalf("no context: %d", resp.StatusCode)
	}
	req = httptest.NewRequest("GET", "/v1/x", nil)
	req.Header.Set(internalctx.Header, ring.Sign(internalctx.Context{ClientID: "partner-1"}))
	resp, _ = app.Test(req)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != "partner-1" {
		t.Fatalf("valid context: %d %s", resp.StatusCode, body)
	}
}

// PathTenant admits the restaurant the gateway authorized, in any case, and
// answers every other path with the one 404.
func TestPathTenant(t *testing.T) {
	ring, _ := internalctx.ParseKeys(key("k1", "a"))
	app := httpx.New(httpx.Options{NoTracing: true}, func(r fiber.Router) {
		r.Get("/v1/restaurants/:restaurantId/x", internalctx.Require(ring), func(c *fiber.Ctx) error {
			ic, id, err := internalctx.PathTenant(c)
			if err != nil {
				return err
			}
			return c.SendString(ic.ClientID + " " + id)
		})
	})
	get := func(path string, tenant *internalctx.Tenant) (int, string) {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set(internalctx.Header, ring.Sign(internalctx.Context{ClientID: "partner-1", Tenant: tenant}))
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	const id = "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a01"
	if st, body := get("/v1/restaurants/"+strings.ToUpper(id)+"/x", &internalctx.Tenant{ID: id}); st != 200 || body != "partner-1 "+id {
		t.Fatalf("authorized restaurant: %d %s", st, body)
	}
	for name, tenant := range map[string]*internalctx.Tenant{"other restaurant": {ID: "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a02"}, "no tenant": nil} {
		if st, body := get("/v1/restaurants/"+id+"/x", tenant); st != 404 || !strings.Contains(body, "not_found") {
			t.Errorf("%s: %d %s", name, st, body)
		}
	}
}
