package server_test

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
)

// rawRequest writes request bytes to the gateway as they are, on a fresh
// connection, and reads one answer.
func (g gw) rawRequest(t testing.TB, request string) response {
	t.Helper()
	var c rawConn
	defer c.close()
	return c.send(t, g, request)
}

// rawConn sends raw requests over one kept-alive connection, dialling again
// when the gateway closes it: a connection per request would run the machine
// out of ports in a long fuzzing run.
type rawConn struct {
	conn net.Conn
	br   *bufio.Reader
}

func (c *rawConn) send(t testing.TB, g gw, request string) response {
	t.Helper()
	if c.conn == nil {
		conn, err := net.Dial("tcp", strings.TrimPrefix(g.listen(t), "http://"))
		if err != nil {
			t.Fatal(err)
		}
		c.conn, c.br = conn, bufio.NewReader(conn)
	}
	_ = c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c.conn, request); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatalf("%q: %v", request, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.Close {
		c.close()
	}
	r := response{status: resp.StatusCode, header: resp.Header, body: b}
	_ = json.Unmarshal(b, &r.env)
	return r
}

func (c *rawConn) close() {
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn = nil
	}
}

// edgeHeaders checks what every answer of the gateway carries.
func (r response) edgeHeaders(t testing.TB, what string) {
	t.Helper()
	if r.header.Get("X-Request-Id") == "" || r.env["request_id"] != r.header.Get("X-Request-Id") || r.header.Get("RateLimit-Policy") == "" {
		t.Errorf("%s: edge headers or envelope missing: %d %v %s", what, r.status, r.header, r.body)
	}
}

// Only identity's public OAuth paths are reachable through the gateway,
// however the path is spelled.
func TestOnlyTheOAuthSurfaceOfIdentityIsReachable(t *testing.T) {
	e := newEnv(t)
	g := e.start(nil, "")
	for _, p := range []string{
		"/oauth2/%2e%2e/metrics", "/oauth2/..%2fadmin/v1/clients", "/oauth2/..%2Fadmin/v1/keys", "/oauth2/../admin/v1/clients",
		"/oauth2/./token", "/oauth2//token", "/oauth2/token/", "/OAUTH2/token", "/oauth2/%74oken", "/oauth2/unknown",
		"/admin/v1/clients", "/metrics/../oauth2/jwks", "/internal/v1/grants/g-rest", "/oauth2\\..\\admin",
	} {
		for _, m := range []string{"GET", "POST"} {
			r := g.rawRequest(t, m+" "+p+" HTTP/1.1\r\nHost: gw\r\nContent-Length: 0\r\n\r\n")
			if r.status != 404 && r.status != 405 {
				t.Errorf("%s %s: %d %s", m, p, r.status, r.body)
			}
			r.edgeHeaders(t, p)
		}
	}
	// An absolute-form target reaches identity with the matched path only.
	r := g.rawRequest(t, "GET http://evil.example/oauth2/jwks HTTP/1.1\r\nHost: gw\r\n\r\n")
	if r.status != 200 {
		t.Errorf("absolute-form: %d %s", r.status, r.body)
	}
	e.id.mu.Lock()
	defer e.id.mu.Unlock()
	for path := range e.id.calls {
		if path != "/oauth2/jwks" {
			t.Errorf("identity was asked for %s", path)
		}
	}
}

func TestMalformedRequestsGetTheEnvelopeAndNothingOfTheRequest(t *testing.T) {
	e := newEnv(t)
	g := e.start(nil, "")
	const secret = "abc.def.ghi"
	for name, req := range map[string]string{
		"letters as length":    "POST /v1/restaurants HTTP/1.1\r\nHost: gw\r\nContent-Length: x\r\nAuthorization: Bearer " + secret + "\r\nCookie: s=" + secret + "\r\n\r\n",
		"negative length":      "POST /v1/restaurants HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer " + secret + "\r\nContent-Length: -1\r\n\r\n",
		"hex length":           "POST /v1/restaurants HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer " + secret + "\r\nContent-Length: 0x10\r\n\r\n",
		"space before colon":   "GET /v1/restaurants HTTP/1.1\r\nHost: gw\r\nAuthorization : Bearer " + secret + "\r\n\r\n",
		"garbage request line": "GET" + secret + "\r\nHost: gw\r\n\r\n",
	} {
		r := g.rawRequest(t, req)
		if r.status != 400 || r.code() != "invalid_request" || r.env["message"] != "The request is not valid HTTP/1.1." {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
		r.edgeHeaders(t, name)
		if strings.Contains(string(r.body), secret) {
			t.Errorf("%s: the answer echoes the request: %s", name, r.body)
		}
	}
}

func TestEdgeOwnErrorsUseTheEnvelope(t *testing.T) {
	e := newEnv(t)
	g := e.start(nil, "")
	tok := e.id.token(t, tokenOpts{})
	for _, m := range []string{"FOO", "get"} {
		r := g.rawRequest(t, m+" /v1/restaurants HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer "+tok+"\r\n\r\n")
		if r.status != 405 || r.code() != "method_not_allowed" || r.header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: %d %v %s", m, r.status, r.header, r.body)
		}
		r.edgeHeaders(t, m)
	}

	// The longest legal search fits; a 100 KB token is an invalid token.
	q := url.Values{"order_id": {strings.Repeat("€", 255)}, "receipt_reference": {strings.Repeat("€", 255)}, "item_name": {strings.Repeat("€", 100)}}
	if r := g.http(t, "GET", "/v1/restaurants/"+restA+"/orders?"+q.Encode(), tok, nil); r.status != 200 {
		t.Errorf("long search: %d %s", r.status, r.body)
	}
	r := g.http(t, "GET", "/v1/restaurants", strings.Repeat("a", 100<<10), nil)
	if r.status != 401 || r.code() != "invalid_token" {
		t.Errorf("100 KB token: %d %s", r.status, r.body)
	}
	r.edgeHeaders(t, "100 KB token")
	r = g.rawRequest(t, "GET /v1/restaurants HTTP/1.1\r\nHost: gw\r\nX-Big: "+strings.Repeat("a", 200<<10)+"\r\n\r\n")
	if r.status != 431 || r.code() != "invalid_request" {
		t.Errorf("200 KB header: %d %s", r.status, r.body)
	}
	r.edgeHeaders(t, "200 KB header")
}

func TestInvalidTextIs400NamingTheParameterOnEveryRoute(t *testing.T) {
	e := newEnv(t)
	g := e.start(nil, "")
	tok := e.id.token(t, tokenOpts{})
	for _, v := range []string{"a%00b", "%ff%fe", "%c3%28", "%ed%a0%80", "%c0%af"} {
		for _, name := range []string{"order_id", "receipt_reference", "item_name"} {
			r := g.do(t, "GET", "/v1/restaurants/"+restA+"/orders?"+name+"="+v, tok, nil)
			if r.status != 400 || !strings.Contains(r.env["message"].(string), "Query parameter "+name) {
				t.Errorf("%s=%s: %d %s", name, v, r.status, r.body)
			}
		}
		r := g.do(t, "GET", "/v1/restaurants/"+restA+"/orders/"+v, tok, nil)
		if r.status != 400 || !strings.Contains(r.env["message"].(string), "Path parameter orderId") {
			t.Errorf("orderId %s: %d %s", v, r.status, r.body)
		}
		if r := g.do(t, "GET", "/oauth2/authorize?client_id="+v, "", nil); r.status != 400 {
			t.Errorf("OAuth query %s: %d %s", v, r.status, r.body)
		}
	}
	if e.services.count() != 0 {
		t.Errorf("invalid text reached a service %d times", e.services.count())
	}
}

func TestMinorEdgeRules(t *testing.T) {
	e := newEnv(t)
	e.vars["UNAUTH_RATE_LIMIT_PER_MINUTE"] = "1"
	g := e.start(nil, "")
	tok := e.id.token(t, tokenOpts{})

	r := g.rawRequest(t, "GET /v1/restaurants HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer "+tok+"\r\nAuthorization: Bearer other\r\n\r\n")
	if r.status != 400 || r.code() != "invalid_request" {
		t.Errorf("two Authorization headers: %d %s", r.status, r.body)
	}
	for _, p := range []string{"/V1/restaurants", "/v1/restaurants/", "/v1/Restaurants"} {
		if r := g.do(t, "GET", p, tok, nil); r.status != 404 {
			t.Errorf("%s: %d", p, r.status)
		}
	}
	long := strings.Repeat("o", 256)
	if r := g.do(t, "GET", "/v1/restaurants/"+restA+"/orders/"+long, tok, nil); r.status != 400 || !strings.Contains(r.env["message"].(string), "orderId") {
		t.Errorf("orderId of 256: %d %s", r.status, r.body)
	}
	if r := g.do(t, "GET", "/v1/restaurants/"+restA+"/orders/"+strings.Repeat("€", 255), tok, nil); r.status != 200 {
		t.Errorf("orderId of 255 characters: %d %s", r.status, r.body)
	}
	// The unauthenticated limit names its own policy.
	g.do(t, "GET", "/.well-known/oauth-protected-resource", "", nil)
	r = g.do(t, "GET", "/.well-known/oauth-protected-resource", "", nil)
	if r.status != 429 || r.header.Get("RateLimit-Policy") != `"partner";q=100000;w=60, "address";q=1;w=60` || !strings.HasPrefix(r.header.Get("RateLimit"), `"address";`) {
		t.Errorf("unauthenticated 429: %d %v", r.status, r.header)
	}
}
