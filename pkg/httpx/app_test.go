package httpx_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/httpx"
)

type createMenu struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

func testApp() *fiber.App {
	return httpx.New(httpx.Options{Name: "test", BodyLimit: 64, NoTracing: true}, func(r fiber.Router) {
		r.Get("/v1/things/:id", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"data": c.Params("id")}) })
		r.Post("/v1/things", func(c *fiber.Ctx) error {
			var body createMenu
			if err := httpx.DecodeJSON(c, &body); err != nil {
				return err
			}
			return c.Status(201).JSON(fiber.Map{"data": body})
		})
		r.Get("/v1/panic", func(c *fiber.Ctx) error { panic("secret internal detail") })
	})
}

func do(t *testing.T, app *fiber.App, method, path, body string, hdr ...string) (*http.Response, httpx.Envelope, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	var env httpx.Envelope
	_ = json.Unmarshal(raw, &env)
	return resp, env, string(raw)
}

func TestEnvelopes(t *testing.T) {
	app := testApp()
	cases := []struct {
		name, method, path, body string
		status                   int
		code, msgHas             string
	}{
		{"unknown path", "GET", "/v1/nope", "", 404, "not_found", "does not exist"},
		{"unknown method", "DELETE", "/v1/things/1", "", 405, "method_not_allowed", "not allowed"},
		{"unknown field", "POST", "/v1/things", `{"name":"a","extra":1}`, 400, "invalid_request", `"extra"`},
		{"trailing data", "POST", "/v1/things", `{"name":"a"} {}`, 400, "invalid_request", "after the JSON"},
		{"wrong type", "POST", "/v1/things", `{"name":1}`, 400, "invalid_request", `name must be a string.`},
		{"malformed", "POST", "/v1/things", `{"name":`, 400, "invalid_request", "complete"},
		{"empty", "POST", "/v1/things", ` `, 400, "invalid_request", "empty"},
		{"panic", "GET", "/v1/panic", "", 500, "internal_error", "request id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, env, raw := do(t, app, tc.method, tc.path, tc.body)
			if resp.StatusCode != tc.status || env.Error != tc.code {
				t.Fatalf("got %d %s, want %d %s: %s", resp.StatusCode, env.Error, tc.status, tc.code, raw)
			}
			if !strings.Contains(env.Message, tc.msgHas) {
				t.Fatalf("message %q lacks %q", env.Message, tc.msgHas)
			}
			if env.RequestID == "" || env.RequestID != resp.Header.Get("X-Request-Id") {
				t.Fatalf("request_id %q vs header %q", env.RequestID, resp.Header.Get("X-Request-Id"))
			}
			if strings.Contains(raw, "secret internal detail") || strings.Contains(raw, "goroutine") {
				t.Fatalf("internals leaked: %s", raw)
			}
		})
	}
	resp, _, _ := do(t, app, "DELETE", "/v1/things/1", "")
	if got := resp.Header.Get("Allow"); got != "GET, HEAD" {
		t.Fatalf("Allow = %q", got)
	}
	resp, _, _ = do(t, app, "GET", "/v1/things", "")
	if got := resp.Header.Get("Allow"); got != "POST" {
		t.Fatalf("Allow = %q", got)
	}
}

func TestRequestID(t *testing.T) {
	app := testApp()
	resp, _, _ := do(t, app, "GET", "/v1/things/1", "", "X-Request-Id", "abc-123:x.y_z")
	if got := resp.Header.Get("X-Request-Id"); got != "abc-123:x.y_z" {
		t.Fatalf("valid id not kept: %q", got)
	}
	for _, bad := range []string{"has space", strings.Repeat("a", 129), "semi;colon", "ä"} {
		resp, _, _ := do(t, app, "GET", "/v1/things/1", "", "X-Request-Id", bad)
		got := resp.Header.Get("X-Request-Id")
		if got == bad || !httpx.ValidRequestID(got) {
			t.Fatalf("invalid id %q answered as %q", bad, got)
		}
	}
	resp, _, _ = do(t, app, "GET", "/v1/things/1", "")
	if !strings.HasPrefix(resp.Header.Get("X-Request-Id"), "req_") {
		t.Fatal("no id generated")
	}
}

func TestHealthAndReadiness(t *testing.T) {
	down := errors.New("connection refused")
	var state error
	app := httpx.New(httpx.Options{NoTracing: true, Ready: []httpx.Check{{Name: "database", Fn: func(context.Context) error { return state }}}}, func(fiber.Router) {})
	if resp, _, _ := do(t, app, "GET", "/healthz", ""); resp.StatusCode != 200 {
		t.Fatalf("healthz %d", resp.StatusCode)
	}
	if resp, _, _ := do(t, app, "GET", "/readyz", ""); resp.StatusCode != 200 {
		t.Fatalf("readyz %d", resp.StatusCode)
	}
	state = down
	resp, _, raw := do(t, app, "GET", "/readyz", "")
	if resp.StatusCode != 503 || !strings.Contains(raw, `"database":"unavailable"`) || strings.Contains(raw, "refused") {
		t.Fatalf("readyz when down: %d %s", resp.StatusCode, raw)
	}
}

func TestMatchPath(t *testing.T) {
	cases := []struct {
		tpl, path string
		want      bool
	}{
		{"/v1/a/:id", "/v1/a/1", true},
		{"/v1/a/:id", "/v1/a", false},
		{"/v1/a/:id", "/v1/a/1/b", false},
		{"/v1/a/*", "/v1/a/1/b", true},
		{"/v1/a", "/v1/a/", true},
	}
	for _, c := range cases {
		if got := httpx.MatchPath(c.tpl, c.path); got != c.want {
			t.Errorf("MatchPath(%q, %q) = %v", c.tpl, c.path, got)
		}
	}
}

func TestBodyLimitOverRealConnection(t *testing.T) {
	app := testApp()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	body := `{"name":"` + strings.Repeat("x", 100) + `"}`
	req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/v1/things", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "big-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env httpx.Envelope
	_ = json.NewDecoder(resp.Body).Decode(&env)
	if resp.StatusCode != 413 || env.Error != "payload_too_large" || env.RequestID != "big-1" || resp.Header.Get("X-Request-Id") != "big-1" {
		t.Fatalf("got %d %+v", resp.StatusCode, env)
	}
}
