package database

import (
	"syscall"
	"time"
)

// tcpUserTimeout is how long sent data may stay unacknowledged before the
// kernel drops the connection.
const tcpUserTimeout = 15 * time.Second

// TCP_USER_TIMEOUT from linux/tcp.h; the syscall package does not name it.
const sysTCPUserTimeout = 0x12

func setUserTimeout(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, sysTCPUserTimeout, int(tcpUserTimeout.Milliseconds()))
	})
	if err != nil {
		return err
	}
	return serr
}
