package lifecycle

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Lingering close bounds: what a closing connection still reads from a
// client that keeps sending (a body over the limit), and for how long.
const (
	lingerBytes = 8 << 20
	lingerTime  = 2 * time.Second
)

// lingerListener closes its connections the way a careful HTTP server
// does: it sends the response and a FIN, then reads and discards what the
// client still sends, within lingerBytes and lingerTime, before closing.
// Closing a socket with unread data makes the kernel send a reset, which
// destroys the response the client has not read yet: a client still
// writing a body over the limit would see "connection reset" instead of
// the 413.
type lingerListener struct{ net.Listener }

func (l lingerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok && err == nil {
		return &lingerConn{TCPConn: tc}, nil
	}
	return c, err
}

// lingerConn is a server connection with a lingering Close. Once closed it
// behaves as closed to the server (reads and writes fail, deadlines are
// ignored: the server may still hold it in another goroutine, as on
// shutdown), while the lingering read owns the socket.
type lingerConn struct {
	*net.TCPConn
	closed atomic.Bool
	// reading is held by each server read, so the lingering read starts
	// only once none is under way.
	reading sync.Mutex
}

func (c *lingerConn) Read(p []byte) (int, error) {
	c.reading.Lock()
	defer c.reading.Unlock()
	if c.closed.Load() {
		return 0, net.ErrClosed
	}
	return c.TCPConn.Read(p)
}

func (c *lingerConn) Write(p []byte) (int, error) {
	if c.closed.Load() {
		return 0, net.ErrClosed
	}
	return c.TCPConn.Write(p)
}

func (c *lingerConn) SetDeadline(t time.Time) error {
	if c.closed.Load() {
		return nil
	}
	return c.TCPConn.SetDeadline(t)
}

func (c *lingerConn) SetReadDeadline(t time.Time) error {
	if c.closed.Load() {
		return nil
	}
	return c.TCPConn.SetReadDeadline(t)
}

func (c *lingerConn) SetWriteDeadline(t time.Time) error {
	if c.closed.Load() {
		return nil
	}
	return c.TCPConn.SetWriteDeadline(t)
}

// Close half-closes at once and finishes closing in the background, so the
// server's worker is not held by a slow client.
func (c *lingerConn) Close() error {
	if c.closed.Swap(true) {
		return net.ErrClosed
	}
	if err := c.TCPConn.CloseWrite(); err != nil {
		return c.TCPConn.Close()
	}
	// Ends a server read waiting on this connection (shutdown closes idle
	// connections from another goroutine).
	_ = c.TCPConn.SetReadDeadline(time.Now())
	go func() {
		c.reading.Lock()
		defer c.reading.Unlock()
		_ = c.TCPConn.SetReadDeadline(time.Now().Add(lingerTime))
		_, _ = io.CopyN(io.Discard, c.TCPConn, lingerBytes)
		_ = c.TCPConn.Close()
	}()
	return nil
}
