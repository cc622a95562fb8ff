// Package webhooksig signs and verifies webhook requests as Standard Webhooks
// 1.0 defines them: headers webhook-id, webhook-timestamp and
// webhook-signature, the signature being "v1," + base64 HMAC-SHA256 of
// "id.timestamp.body" keyed with the secret's decoded bytes. Secrets read
// "whsec_" + base64; during a rotation a request carries one signature per
// live secret, space-separated, and a receiver accepts any that matches.
package webhooksig

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// SecretPrefix starts every secret.
const SecretPrefix = "whsec_"

// Tolerance is how far a timestamp may be from the receiver's clock.
const Tolerance = 5 * time.Minute

// NewSecret returns a fresh secret of 32 random bytes.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand documents it)
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// Key decodes a secret into its HMAC key. The prefix is optional, as the
// reference libraries accept both.
func Key(secret string) ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil || len(k) == 0 {
		return nil, errors.New("webhook secret is not whsec_ followed by base64")
	}
	return k, nil
}

// Sign returns the v1 signature of one message with key.
func Sign(key []byte, id string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(strconv.FormatInt(ts, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// SignAll returns the webhook-signature header value: one signature per
// key, space-separated.
func SignAll(keys [][]byte, id string, ts int64, body []byte) string {
	sigs := make([]string, len(keys))
	for i, k := range keys {
		sigs[i] = Sign(k, id, ts, body)
	}
	return strings.Join(sigs, " ")
}

// SetHeaders sets the three headers on h.
func SetHeaders(h http.Header, keys [][]byte, id string, ts time.Time, body []byte) {
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, SignAll(keys, id, ts.Unix(), body))
}

// Errors of Verify.
var (
	ErrMissingHeaders = errors.New("webhook-id, webhook-timestamp or webhook-signature is missing")
	ErrTimestamp      = errors.New("webhook-timestamp is not within 5 minutes of now")
	ErrSignature      = errors.New("no webhook-signature matches the secret")
)

// Verify checks a received request's headers and body with secret at now:
// the timestamp within Tolerance and at least one v1 signature matching.
func Verify(secret string, h http.Header, body []byte, now time.Time) error {
	key, err := Key(secret)
	if err != nil {
		return err
	}
	id, tsText, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || tsText == "" || sigs == "" {
		return ErrMissingHeaders
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return ErrTimestamp
	}
	if d := now.Sub(time.Unix(ts, 0)); d > Tolerance || d < -Tolerance {
		return ErrTimestamp
	}
	want := []byte(Sign(key, id, ts, body))
	for _, s := range strings.Fields(sigs) {
		if hmac.Equal([]byte(s), want) {
			return nil
		}
	}
	return ErrSignature
}
