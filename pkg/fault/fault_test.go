package fault_test

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"partnerapi.dev/pkg/fault"
)

type missing struct{ what string }

func (m *missing) Error() string    { return m.what + " is missing" }
func (m *missing) Kind() fault.Kind { return fault.NotFound }

func TestOf(t *testing.T) {
	fault.RegisterClassifier(func(err error) fault.Kinded {
		if errors.Is(err, io.ErrClosedPipe) {
			return fault.New(fault.Unavailable, "pipe closed")
		}
		return nil
	})
	for _, tc := range []struct {
		name string
		err  error
		kind fault.Kind
		msg  string
	}{
		{"nil", nil, fault.Unknown, ""},
		{"plain", errors.New("boom"), fault.Unknown, ""},
		{"sentinel", fault.New(fault.Conflict, "taken"), fault.Conflict, "taken"},
		{"own type, wrapped", fmt.Errorf("load: %w", &missing{"order"}), fault.NotFound, "order is missing"},
		{"classified", fmt.Errorf("write: %w", io.ErrClosedPipe), fault.Unavailable, "pipe closed"},
		{"declared wins over classified", fmt.Errorf("%w: %w", fault.New(fault.Invalid, "bad"), io.ErrClosedPipe), fault.Invalid, "bad"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, e := fault.Of(tc.err)
			if k != tc.kind {
				t.Fatalf("kind = %d, want %d", k, tc.kind)
			}
			if got := fmt.Sprint(e); tc.msg != "" && got != tc.msg {
				t.Fatalf("message = %q, want %q", got, tc.msg)
			}
		})
	}
}
