// Package password hashes user passwords with argon2id in the PHC string
// format, so parameters can be raised later without breaking old hashes.
package password

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/crypto/argon2"
)

// Cost is the memory and passes of new hashes: OWASP's argon2id minimum
// (19 MiB, 2 passes). Verify reads each hash's own parameters, so raising
// them later keeps old hashes valid. A variable for the tests, which hash
// at the lowest cost: under the race detector one hash at this cost takes
// about 0.1 s of CPU, and every server test seeds its users.
var Cost = struct{ MemoryKiB, Passes uint32 }{MemoryKiB: 19 * 1024, Passes: 2}

const (
	threads = 1
	keyLen  = 32
)

var b64 = base64.RawStdEncoding

// slots bounds the hashes computed at once to GOMAXPROCS (the container's
// CPU limit rounded up, at least 2). Each hash holds a CPU and
// Cost.MemoryKiB of memory until it ends: a burst of sign-ins waits here
// instead of multiplying the process's memory past its limit and starving
// its other requests of CPU.
var slots = make(chan struct{}, runtime.GOMAXPROCS(0))

// derive computes an argon2id key once a slot is free, or returns ctx's
// error if ctx ends first.
func derive(ctx context.Context, pw, salt []byte, passes, memoryKiB uint32, p uint8, n uint32) ([]byte, error) {
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-slots }()
	return argon2.IDKey(pw, salt, passes, memoryKiB, p, n), nil
}

// Hash returns the PHC-encoded argon2id hash of pw.
func Hash(ctx context.Context, pw string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key, err := derive(ctx, []byte(pw), salt, Cost.Passes, Cost.MemoryKiB, threads, keyLen)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, Cost.MemoryKiB, Cost.Passes, threads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// Verify reports whether pw matches the encoded hash.
func Verify(ctx context.Context, encoded, pw string) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errors.New("unsupported password hash")
	}
	var m uint32
	var t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil {
		return false, errors.New("malformed password hash")
	}
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, errors.New("malformed password hash")
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil {
		return false, errors.New("malformed password hash")
	}
	got, err := derive(ctx, []byte(pw), salt, t, m, p, uint32(len(want)))
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// dummy is verified against when the email is unknown, so sign-in takes the
// same time whether or not an account exists. It is made at first use, at
// the Cost new hashes have then.
var dummy = sync.OnceValues(func() (string, error) { return Hash(context.Background(), "not-a-real-password") })

// VerifyDummy spends the time of one verification.
func VerifyDummy(ctx context.Context, pw string) {
	if h, err := dummy(); err == nil {
		_, _ = Verify(ctx, h, pw)
	}
}
