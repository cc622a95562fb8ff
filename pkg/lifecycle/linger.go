package lifecycle

import (
	"io"
	"net"
	"sync"
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

type lingerConn struct {
	*net.TCPConn
	once sync.Once
}

// Close half-closes at once and finishes closing in the background, so the
// server's worker is not held by a slow client.
func (c *lingerConn) Close() error {
	err := net.ErrClosed
	c.once.Do(func() {
		err = c.TCPConn.CloseWrite()
		if err != nil {
			_ = c.TCPConn.Close()
			return
		}
		go func() {
			_ = c.TCPConn.SetReadDeadline(time.Now().Add(lingerTime))
			_, _ = io.CopyN(io.Discard, c.TCPConn, lingerBytes)
			_ = c.TCPConn.Close()
		}()
	})
	return err
}
