package proxy

import (
	"bufio"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// rawUpstream is an HTTP/1.1 server on a bare listener, so a test decides
// when a connection closes. answer runs for every request read; it returns
// whether to close the connection after answering (without saying so).
type rawUpstream struct {
	addr     string
	conns    atomic.Int32
	requests atomic.Int32
}

func newRawUpstream(t *testing.T, answer func(n int32, r *http.Request) (body string, hangUp bool)) *rawUpstream {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	u := &rawUpstream{addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u.conns.Add(1)
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					r, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					body, hangUp := answer(u.requests.Add(1), r)
					fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
					if hangUp {
						return
					}
				}
			}()
		}
	}()
	return u
}

func (u *rawUpstream) pool() *conns {
	return &conns{addr: u.addr, connectTimeout: time.Second, timeout: 2 * time.Second}
}

func exchange(t *testing.T, p *conns, method string, sent func()) (string, error) {
	t.Helper()
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI("http://" + p.addr + "/x")
	err := p.exchange(req, resp, isRead([]byte(method)), sent)
	return string(resp.Body()), err
}

func TestConnectionsAreKeptAndReused(t *testing.T) {
	u := newRawUpstream(t, func(n int32, _ *http.Request) (string, bool) { return fmt.Sprint(n), false })
	p := u.pool()
	for i := 1; i <= 5; i++ {
		if body, err := exchange(t, p, "GET", nil); err != nil || body != fmt.Sprint(i) {
			t.Fatalf("exchange %d: %q %v", i, body, err)
		}
	}
	if n := u.conns.Load(); n != 1 {
		t.Errorf("%d connections for 5 sequential requests, want 1", n)
	}
}

func TestSentRunsOnceTheRequestIsWrittenBeforeTheAnswer(t *testing.T) {
	sent := make(chan struct{})
	u := newRawUpstream(t, func(int32, *http.Request) (string, bool) {
		select { // the upstream answers only once sent ran
		case <-sent:
			return "ok", false
		case <-time.After(time.Second):
			return "sent did not run before the answer was awaited", false
		}
	})
	var runs int
	body, err := exchange(t, u.pool(), "GET", func() { runs++; close(sent) })
	if err != nil || body != "ok" || runs != 1 {
		t.Errorf("%q %v, sent ran %d times", body, err, runs)
	}
}

// The upstream hangs up after its first answer without saying so: the
// pooled connection is dead when the next request takes it.
func hangsUpAfterEachAnswer(int32, *http.Request) (string, bool) { return "ok", true }

func TestAReadOnAConnectionClosedByTheUpstreamIsSentAgainOnce(t *testing.T) {
	u := newRawUpstream(t, hangsUpAfterEachAnswer)
	p := u.pool()
	if _, err := exchange(t, p, "GET", nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the hang-up reaches us
	var runs int
	if body, err := exchange(t, p, "GET", func() { runs++ }); err != nil || body != "ok" {
		t.Fatalf("retried read: %q %v", body, err)
	}
	if runs != 1 {
		t.Errorf("sent ran %d times over the attempts, want 1", runs)
	}
	if n := u.requests.Load(); n != 2 {
		t.Errorf("upstream answered %d requests, want 2", n)
	}
}

func TestAWriteIsNeverSentTwice(t *testing.T) {
	u := newRawUpstream(t, hangsUpAfterEachAnswer)
	p := u.pool()
	if _, err := exchange(t, p, "POST", nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if _, err := exchange(t, p, "POST", nil); err == nil {
		t.Fatal("a write on a dead connection succeeded")
	}
	if n := u.requests.Load(); n != 1 {
		t.Errorf("upstream answered %d requests, want 1", n)
	}
	if body, err := exchange(t, p, "POST", nil); err != nil || body != "ok" {
		t.Errorf("the next write, on a new connection: %q %v", body, err)
	}
}

func TestIdleConnectionsExpireAndTheCountIsBounded(t *testing.T) {
	u := newRawUpstream(t, func(int32, *http.Request) (string, bool) { return "ok", false })
	p := u.pool()
	if _, err := exchange(t, p, "GET", nil); err != nil {
		t.Fatal(err)
	}
	p.idle[0].returned = time.Now().Add(-maxIdle)
	if _, err := exchange(t, p, "GET", nil); err != nil {
		t.Fatal(err)
	}
	if n := u.conns.Load(); n != 2 || p.open != 1 || len(p.idle) != 1 {
		t.Errorf("after expiry: %d connections made, %d open, %d idle; want 2, 1, 1", n, p.open, len(p.idle))
	}

	p.mu.Lock()
	p.idle, p.open = nil, maxConns
	p.mu.Unlock()
	if _, err := exchange(t, p, "GET", nil); !errors.Is(err, errTooManyConns) {
		t.Errorf("at the connection limit: %v", err)
	}
}

func TestConcurrentExchangesEachGetTheirOwnAnswer(t *testing.T) {
	u := newRawUpstream(t, func(_ int32, r *http.Request) (string, bool) { return r.Header.Get("X-N"), false })
	p := u.pool()
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := range 50 {
		wg.Go(func() {
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			req.SetRequestURI("http://" + p.addr + "/x")
			req.Header.Set("X-N", fmt.Sprint(i))
			if err := p.exchange(req, resp, true, nil); err != nil || string(resp.Body()) != fmt.Sprint(i) {
				errs <- fmt.Errorf("request %d: %q %w", i, resp.Body(), err)
			}
		})
	}
	wg.Wait()
	close(errs)
	var msgs []string
	for err := range errs {
		msgs = append(msgs, err.Error())
	}
	if len(msgs) > 0 {
		t.Error(strings.Join(msgs, "\n"))
	}
	if p.open != len(p.idle) || p.open > 50 {
		t.Errorf("%d open, %d idle after every exchange ended", p.open, len(p.idle))
	}
}

func TestAFailedWriteRunsNoHookAndAReadGoesOnANewConnection(t *testing.T) {
	u := newRawUpstream(t, func(int32, *http.Request) (string, bool) { return "ok", false })
	p := u.pool()
	breakIdle := func() {
		if _, err := exchange(t, p, "GET", nil); err != nil {
			t.Fatal(err)
		}
		// Shut our sending side: the next write on it fails (EPIPE).
		if err := p.idle[len(p.idle)-1].Conn.(*net.TCPConn).CloseWrite(); err != nil {
			t.Fatal(err)
		}
	}
	breakIdle()
	var runs int
	if body, err := exchange(t, p, "GET", func() { runs++ }); err != nil || body != "ok" || runs != 1 {
		t.Errorf("read after a failed write: %q %v, sent ran %d times", body, err, runs)
	}
	breakIdle()
	runs = 0
	if _, err := exchange(t, p, "POST", func() { runs++ }); err == nil || runs != 0 {
		t.Errorf("write on a broken connection: %v, sent ran %d times", err, runs)
	}
	if n := u.requests.Load(); n != 3 {
		t.Errorf("upstream answered %d requests, want 3", n)
	}
}

func TestAnHTTPSUpstream(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("over tls " + r.URL.Path))
	}))
	defer srv.Close()
	u := New("secure", srv.URL, time.Second, 2*time.Second)
	if u.conns.tls == nil || u.conns.addr != strings.TrimPrefix(srv.URL, "https://") {
		t.Fatalf("https base not dialled with TLS: %+v", u.conns)
	}
	u.conns.tls.RootCAs = x509.NewCertPool()
	u.conns.tls.RootCAs.AddCert(srv.Certificate())
	u.conns.tls.ServerName = "example.com" // the test certificate's name
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(srv.URL + "/x")
	if err := u.conns.exchange(req, resp, true, nil); err != nil || string(resp.Body()) != "over tls /x" {
		t.Errorf("%q %v", resp.Body(), err)
	}
}

func TestAReadIsSentAgainOnANewConnectionNotAnotherIdleOne(t *testing.T) {
	u := newRawUpstream(t, hangsUpAfterEachAnswer)
	p := u.pool()
	// Two idle connections, both hung up by the upstream.
	if _, err := exchange(t, p, "GET", nil); err != nil {
		t.Fatal(err)
	}
	first := p.idle
	p.idle = nil
	if _, err := exchange(t, p, "GET", nil); err != nil {
		t.Fatal(err)
	}
	p.idle = append(first, p.idle...)
	time.Sleep(50 * time.Millisecond)
	if body, err := exchange(t, p, "GET", nil); err != nil || body != "ok" {
		t.Errorf("read with every idle connection dead: %q %v", body, err)
	}
}
