package httpx_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/httpx"
)

// serve runs app on a real socket: malformed requests cannot go through app.Test.
func serve(t *testing.T, app *fiber.App) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	return ln.Addr().String()
}

// raw writes request bytes as they are and reads one answer.
func raw(t *testing.T, addr, request string) (*http.Response, httpx.Envelope, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%q: %v", request, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var env httpx.Envelope
	_ = json.Unmarshal(b, &env)
	return resp, env, string(b)
}

func TestMalformedRequestsAnswerTheEnvelopeWithoutEchoingThem(t *testing.T) {
	addr := serve(t, testApp())
	const secret = "abc.def.ghi"
	cases := map[string]string{
		"letters as length":    "POST /v1/things HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\nAuthorization: Bearer " + secret + "\r\nCookie: s=" + secret + "\r\n\r\n",
		"negative length":      "POST /v1/things HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + secret + "\r\nContent-Length: -5\r\n\r\n",
		"hex length":           "POST /v1/things HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + secret + "\r\nContent-Length: 0x10\r\n\r\n",
		"space before colon":   "GET /v1/things/1 HTTP/1.1\r\nHost: x\r\nAuthorization : Bearer " + secret + "\r\n\r\n",
		"garbage request line": "GARBAGE" + secret + "\r\nHost: x\r\n\r\n",
	}
	for name, req := range cases {
		t.Run(name, func(t *testing.T) {
			resp, env, body := raw(t, addr, req)
			if resp.StatusCode != 400 || env.Error != "invalid_request" || env.Message != "The request is not valid HTTP/1.1." {
				t.Errorf("%d %s", resp.StatusCode, body)
			}
			if id := resp.Header.Get("X-Request-Id"); id == "" || env.RequestID != id {
				t.Errorf("request id %q vs %q", id, env.RequestID)
			}
			if strings.Contains(body, secret) || strings.Contains(body, "Host") {
				t.Errorf("the answer echoes the request: %s", body)
			}
		})
	}
}

func TestUnknownMethodsAnswerTheEnvelope(t *testing.T) {
	addr := serve(t, testApp())
	for _, m := range []string{"FOO", "get", "PROPFIND"} {
		resp, env, body := raw(t, addr, m+" /v1/things/1 HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp.StatusCode != 405 || env.Error != "method_not_allowed" || resp.Header.Get("Allow") != "GET, HEAD" || resp.Header.Get("X-Request-Id") == "" {
			t.Errorf("%s: %d %v %s", m, resp.StatusCode, resp.Header, body)
		}
	}
	if resp, env, body := raw(t, addr, "FOO /nowhere HTTP/1.1\r\nHost: x\r\n\r\n"); resp.StatusCode != 404 || env.Error != "not_found" {
		t.Errorf("unknown method on an unknown path: %d %s", resp.StatusCode, body)
	}
}

func TestInvalidTextInPathOrQueryIs400NamingIt(t *testing.T) {
	app := testApp()
	for _, v := range []string{"a%00b", "%ff%fe", "%c3%28", "%ed%a0%80", "%c0%af"} {
		resp, env, body := do(t, app, "GET", "/v1/things/1?order_id="+v, "")
		if resp.StatusCode != 400 || !strings.Contains(env.Message, "order_id") {
			t.Errorf("query %s: %d %s", v, resp.StatusCode, body)
		}
		resp, env, body = do(t, app, "GET", "/v1/things/"+v, "")
		if resp.StatusCode != 400 || !strings.Contains(env.Message, "id") {
			t.Errorf("path %s: %d %s", v, resp.StatusCode, body)
		}
	}
	if resp, _, body := do(t, app, "GET", "/v1/things/1?"+url.QueryEscape("\xff")+"=1", ""); resp.StatusCode != 400 || strings.Contains(body, "\ufffd") {
		t.Errorf("invalid parameter name: %d %s", resp.StatusCode, body)
	}
	if resp, _, body := raw(t, serve(t, testApp()), "GET /v1/things/%zz HTTP/1.1\r\nHost: x\r\n\r\n"); resp.StatusCode != 400 {
		t.Errorf("malformed escape: %d %s", resp.StatusCode, body)
	}
	if resp, env, _ := do(t, app, "GET", "/v1/things/caf%C3%A9?q=%E2%82%AC", ""); resp.StatusCode != 200 || env.Error != "" {
		t.Errorf("valid UTF-8 refused: %d", resp.StatusCode)
	}
}

func TestOneCanonicalPath(t *testing.T) {
	app := testApp()
	for _, p := range []string{"/V1/things/1", "/v1/things/1/", "/v1//things/1", "/v1/things/./1", "/v1/x/../things/1", "/v1/things%2F1"} {
		if resp, env, body := do(t, app, "GET", p, ""); resp.StatusCode != 404 || env.Error != "not_found" {
			t.Errorf("%s: %d %s", p, resp.StatusCode, body)
		}
	}
}

func TestHeadersSizedForLongQueries(t *testing.T) {
	app := testApp()
	q := url.Values{"a": {strings.Repeat("€", 255)}, "b": {strings.Repeat("€", 255)}, "c": {strings.Repeat("€", 255)}}
	if resp, _, body := do(t, app, "GET", "/v1/things/1?"+q.Encode(), ""); resp.StatusCode != 200 {
		t.Errorf("long legal query: %d %s", resp.StatusCode, body)
	}
	addr := serve(t, testApp())
	resp, env, body := raw(t, addr, "GET /v1/things/1 HTTP/1.1\r\nHost: x\r\nX-Big: "+strings.Repeat("a", 200<<10)+"\r\n\r\n")
	if resp.StatusCode != 431 || env.Error != "invalid_request" || resp.Header.Get("X-Request-Id") == "" {
		t.Errorf("oversized headers: %d %s", resp.StatusCode, body)
	}
}
