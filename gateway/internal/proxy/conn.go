package proxy

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// conns are the keep-alive connections to one upstream, and exchange sends
// one request over them. The gateway owns this loop instead of a
// fasthttp.HostClient so that it can act between writing a request and
// reading its answer, on the same goroutine: that is when a deferred
// rate-limit count goes to Redis, overlapping the service's work without a
// hand-off to another goroutine (which, with an idle processor, wakes an OS
// thread on the request's path).
type conns struct {
	addr           string
	tls            *tls.Config // nil for plain HTTP
	connectTimeout time.Duration
	timeout        time.Duration // bounds one exchange: write and answer

	mu   sync.Mutex
	idle []*conn // oldest first; the most recently used is taken next
	open int
}

type conn struct {
	net.Conn
	br       *bufio.Reader
	bw       *bufio.Writer
	returned time.Time // when it last went back to idle
}

const (
	// maxConns bounds the connections to one upstream; beyond it a
	// request is refused (503) instead of queueing without bound.
	maxConns = 512
	// maxIdle is how long an idle connection is kept: well under the
	// services' 90 s idle timeout, so a kept one is rarely closed under us.
	maxIdle = 10 * time.Second
	// bufferSize is the read and write buffer of a connection: it bounds
	// a request's and an answer's header block.
	bufferSize = 8 << 10
)

var errTooManyConns = errors.New("too many connections to the upstream")

// get takes the most recently used idle connection, or dials one (always
// when fresh is set); reused tells which.
func (p *conns) get(fresh bool) (c *conn, reused bool, err error) {
	now := time.Now()
	var stale []*conn
	dial := false
	p.mu.Lock()
	// The oldest are first: close the ones idle too long.
	for len(p.idle) > 0 && now.Sub(p.idle[0].returned) >= maxIdle {
		stale = append(stale, p.idle[0])
		p.idle = p.idle[1:]
		p.open--
	}
	if n := len(p.idle); n > 0 && !fresh {
		c = p.idle[n-1]
		p.idle = p.idle[:n-1]
	} else if p.open < maxConns {
		p.open++
		dial = true
	}
	p.mu.Unlock()
	for _, s := range stale {
		s.Close()
	}
	switch {
	case c != nil:
		return c, true, nil
	case !dial:
		return nil, false, errTooManyConns
	}
	nc, err := p.dial()
	if err != nil {
		p.mu.Lock()
		p.open--
		p.mu.Unlock()
		return nil, false, err
	}
	return &conn{Conn: nc, br: bufio.NewReaderSize(nc, bufferSize), bw: bufio.NewWriterSize(nc, bufferSize)}, false, nil
}

func (p *conns) dial() (net.Conn, error) {
	d := &net.Dialer{Timeout: p.connectTimeout, KeepAlive: 30 * time.Second}
	if p.tls != nil {
		return (&tls.Dialer{NetDialer: d, Config: p.tls}).Dial("tcp", p.addr)
	}
	return d.Dial("tcp", p.addr)
}

// put returns a connection for reuse.
func (p *conns) put(c *conn) {
	c.returned = time.Now()
	p.mu.Lock()
	p.idle = append(p.idle, c)
	p.mu.Unlock()
}

// discard closes a connection that cannot be reused.
func (p *conns) discard(c *conn) {
	c.Close()
	p.mu.Lock()
	p.open--
	p.mu.Unlock()
}

// exchange writes req and reads its answer into resp. sent, when set, runs
// once the request is written, before the answer is awaited. A request
// that may reach the upstream twice (retry set: a read, or a write the
// upstream answers once per idempotency key) whose reused connection turns
// out closed by the upstream before anything was answered is sent once
// more on a new connection; any other write is never sent twice.
func (p *conns) exchange(req *fasthttp.Request, resp *fasthttp.Response, retry bool, sent func()) error {
	for attempt := 0; ; attempt++ {
		c, reused, err := p.get(attempt > 0)
		if err != nil {
			return err
		}
		again, err := p.once(c, req, resp, &sent)
		if err == nil || !again || !reused || !retry || attempt > 0 {
			return err
		}
	}
}

// once is one attempt of exchange on c. It runs *sent once the request is
// written and clears it, so that it runs only once over the attempts. again
// tells whether the failure came before the upstream answered anything.
func (p *conns) once(c *conn, req *fasthttp.Request, resp *fasthttp.Response, sent *func()) (again bool, err error) {
	resp.Reset()
	if err := c.SetDeadline(time.Now().Add(p.timeout)); err != nil {
		p.discard(c)
		return true, err
	}
	err = req.Write(c.bw)
	if err == nil {
		err = c.bw.Flush()
	}
	if err != nil {
		p.discard(c)
		return !isTimeout(err), fmt.Errorf("write request: %w", err)
	}
	if f := *sent; f != nil {
		*sent = nil
		f()
	}
	resp.SkipBody = req.Header.IsHead()
	if err := resp.ReadLimitBody(c.br, MaxResponseBytes); err != nil {
		p.discard(c)
		return closedBeforeAnswering(err), fmt.Errorf("read answer: %w", err)
	}
	// -2: a body delimited by the end of the connection.
	if resp.ConnectionClose() || resp.Header.ContentLength() == -2 {
		p.discard(c)
	} else {
		p.put(c)
	}
	return false, nil
}

// closedBeforeAnswering tells a connection the upstream had closed (an end
// of stream or a reset where an answer should begin) from a failure within
// an answer (io.ErrUnexpectedEOF) or a timeout.
func closedBeforeAnswering(err error) bool {
	var nothing fasthttp.ErrNothingRead
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.As(err, &nothing) && !isTimeout(err)
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}
