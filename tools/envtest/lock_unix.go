//go:build unix

package envtest

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// LockFile takes an exclusive flock on path, waiting (and saying so) while another
// process builds. The lock goes away with the process, so a killed build never wedges it.
func LockFile(ctx context.Context, path string, log io.Writer) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("envtest lock: %w", err)
	}
	said := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if err != syscall.EWOULDBLOCK && err != syscall.EINTR {
			f.Close()
			return nil, fmt.Errorf("envtest lock %s: %w", path, err)
		}
		if !said {
			fmt.Fprintf(log, "envtest: another process is building the binaries (%s held); waiting\n", path)
			said = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
