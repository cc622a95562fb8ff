package oauth

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// secretHasher compares client secrets with bcrypt, and remembers a
// successful comparison for a few minutes, keyed by a SHA-256 of hash and
// secret, so a busy confidential client does not pay ~50-100 ms of bcrypt on
// every token request. A changed secret has another hash, so another key.
type secretHasher struct {
	cost int
	ttl  time.Duration
	mu   sync.Mutex
	ok   map[[32]byte]time.Time
}

const maxCachedSecrets = 10000

func newSecretHasher(cost int) *secretHasher {
	return &secretHasher{cost: cost, ttl: 5 * time.Minute, ok: map[[32]byte]time.Time{}}
}

func (h *secretHasher) key(hash, data []byte) [32]byte {
	s := sha256.New()
	s.Write(hash)
	s.Write([]byte{0})
	s.Write(data)
	var k [32]byte
	copy(k[:], s.Sum(nil))
	return k
}

// Compare implements fosite.Hasher.
func (h *secretHasher) Compare(_ context.Context, hash, data []byte) error {
	k := h.key(hash, data)
	now := time.Now()
	h.mu.Lock()
	exp, hit := h.ok[k]
	h.mu.Unlock()
	if hit && now.Before(exp) {
		return nil
	}
	if err := bcrypt.CompareHashAndPassword(hash, data); err != nil {
		return err
	}
	h.mu.Lock()
	if len(h.ok) >= maxCachedSecrets {
		clear(h.ok)
	}
	h.ok[k] = now.Add(h.ttl)
	h.mu.Unlock()
	return nil
}

// Hash implements fosite.Hasher.
func (h *secretHasher) Hash(_ context.Context, data []byte) ([]byte, error) {
	return bcrypt.GenerateFromPassword(data, h.cost)
}
