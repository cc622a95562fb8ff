// Package password hashes user passwords with argon2id in the PHC string
// format, so parameters can be raised later without breaking old hashes.
package password

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

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

// Hash returns the PHC-encoded argon2id hash of pw.
func Hash(pw string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(pw), salt, Cost.Passes, Cost.MemoryKiB, threads, keyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, Cost.MemoryKiB, Cost.Passes, threads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// Verify reports whether pw matches the encoded hash.
func Verify(encoded, pw string) (bool, error) {
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
	got := argon2.IDKey([]byte(pw), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// dummy is verified against when the email is unknown, so sign-in takes the
// same time whether or not an account exists.
var dummy, _ = Hash("not-a-real-password")

// VerifyDummy spends the time of one verification.
func VerifyDummy(pw string) { _, _ = Verify(dummy, pw) }
