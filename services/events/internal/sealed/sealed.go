// Package sealed keeps webhook signing secrets encrypted at rest: AES-256-GCM
// under a key ring from configuration (WEBHOOK_SECRET_KEYS). A sealed value
// names the key that sealed it, so a new key can be added in front of the
// ring, every value sealed again under it, and the old key removed.
package sealed

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// prefix starts every sealed value: "sealed:v1:<key id>:<base64 of nonce
// and ciphertext>".
const prefix = "sealed:v1:"

var keyID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// Keyring seals with its first key and opens with any of them.
type Keyring struct {
	active string
	aeads  map[string]cipher.AEAD
}

// Parse reads "kid:base64,kid:base64…": each key 32 random bytes in
// standard base64; the first one seals.
func Parse(s string) (*Keyring, error) {
	k := &Keyring{aeads: map[string]cipher.AEAD{}}
	for _, part := range strings.Split(s, ",") {
		id, b64, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok || !keyID.MatchString(id) {
			return nil, errors.New("each key is <id>:<base64 of 32 bytes>, the id 1 to 32 of A-Z a-z 0-9 _ -")
		}
		key, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(key) != 32 {
			return nil, fmt.Errorf("key %s must be base64 of 32 bytes", id)
		}
		if _, dup := k.aeads[id]; dup {
			return nil, fmt.Errorf("key %s is given twice", id)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		k.aeads[id] = aead
		if k.active == "" {
			k.active = id
		}
	}
	return k, nil
}

// Seal encrypts plain under the active key, bound to owner (the endpoint
// id: a value copied to another row does not open). An empty plain stays
// empty.
func (k *Keyring) Seal(plain, owner string) (string, error) {
	if plain == "" {
		return "", nil
	}
	aead := k.aeads[k.active]
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := aead.Seal(nonce, nonce, []byte(plain), []byte(owner))
	return prefix + k.active + ":" + base64.StdEncoding.EncodeToString(out), nil
}

// Open decrypts a sealed value. A value that is not sealed (written before
// secrets were sealed, not yet sealed again) is returned as it is.
func (k *Keyring) Open(v, owner string) (string, error) {
	rest, ok := strings.CutPrefix(v, prefix)
	if !ok {
		return v, nil
	}
	id, b64, _ := strings.Cut(rest, ":")
	aead, known := k.aeads[id]
	raw, err := base64.StdEncoding.DecodeString(b64)
	if !known || err != nil || len(raw) < aead.NonceSize() {
		return "", fmt.Errorf("a webhook secret sealed with key %q cannot be opened: is that key in WEBHOOK_SECRET_KEYS?", id)
	}
	n := aead.NonceSize()
	plain, err := aead.Open(nil, raw[:n], raw[n:], []byte(owner))
	if err != nil {
		return "", fmt.Errorf("a webhook secret sealed with key %q does not open", id)
	}
	return string(plain), nil
}

// Current reports whether v is empty or sealed under the active key:
// nothing to seal again.
func (k *Keyring) Current(v string) bool {
	return v == "" || strings.HasPrefix(v, prefix+k.active+":")
}
