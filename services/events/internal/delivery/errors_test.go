package delivery

import (
	"context"
	"errors"
	"net/url"
	"testing"
)

// A timed-out attempt (the client's deadline) is a timeout, however the
// transport wraps it.
func TestTransportErrorTimeout(t *testing.T) {
	err := &url.Error{Op: "Post", URL: "https://10.1.2.3:8443/hooks", Err: context.DeadlineExceeded}
	if got := transportError(err); got != ErrTextTimeout {
		t.Fatalf("%q", got)
	}
	if got := transportError(errors.New("dial tcp 10.1.2.3:8443: something new")); got != ErrTextOther {
		t.Fatalf("%q", got)
	}
}
