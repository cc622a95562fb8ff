// Package fault is the one vocabulary of error kinds every service speaks:
// a domain keeps its own error types and says which kind each is, and the
// HTTP layer (httpx.WriteError) turns a kind into an answer in one place.
// It is a package of its own, apart from httpx, because domains import it and
// a domain imports no HTTP framework.
package fault

import (
	"errors"
	"sync"
)

// Kind is what the caller can do about an error.
type Kind uint8

const (
	// Unknown is an error of no declared kind: an internal error.
	Unknown Kind = iota
	// Invalid: the request must change; the error's message says how.
	Invalid
	// NotFound: the resource does not exist or is outside the caller's reach.
	NotFound
	// Conflict: the request collides with the current state; the error's
	// message says with what.
	Conflict
	// Unavailable: a dependency is down; the same request may work later.
	Unavailable
	// CapabilityDisabled: the capability is switched off for now.
	CapabilityDisabled
)

// Kinded is implemented by errors that declare their kind.
type Kinded interface {
	error
	Kind() Kind
}

// Error is an error with a kind, for a domain that needs no type of its own
// (a sentinel such as ErrNotFound).
type Error struct {
	K   Kind
	Msg string
}

// New returns an error of kind k with message msg.
func New(k Kind, msg string) *Error { return &Error{K: k, Msg: msg} }

func (e *Error) Error() string { return e.Msg }

// Kind returns the error's kind.
func (e *Error) Kind() Kind { return e.K }

var (
	mu          sync.RWMutex
	classifiers []func(error) Kinded
)

// RegisterClassifier lets a library give kinds to errors it cannot make
// implement Kinded itself (a driver's errors). classify returns nil for an
// error it does not know. Libraries register in an init function.
func RegisterClassifier(classify func(error) Kinded) {
	mu.Lock()
	defer mu.Unlock()
	classifiers = append(classifiers, classify)
}

// Of returns the kind of err and the error that declares it: the first error
// in err's chain implementing Kinded, else what a registered classifier
// makes of err. It returns (Unknown, nil) for an error of no kind.
func Of(err error) (Kind, error) {
	if err == nil {
		return Unknown, nil
	}
	var k Kinded
	if errors.As(err, &k) {
		return k.Kind(), k
	}
	mu.RLock()
	defer mu.RUnlock()
	for _, classify := range classifiers {
		if k := classify(err); k != nil {
			return k.Kind(), k
		}
	}
	return Unknown, nil
}
