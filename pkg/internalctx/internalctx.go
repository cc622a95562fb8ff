// Package internalctx carries what the gateway decided about a request (who
// calls, under which grant, for which tenant) to the service that answers it,
// in a header signed with a shared key. Services refuse requests without a
// valid one, so a pod reached directly inside the cluster gives nothing away.
package internalctx

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/httpx"
)

// Header is the request header holding the signed context.
const Header = "X-Internal-Context"

// MaxAge bounds how old a signed context may be (clock skew included).
const MaxAge = 2 * time.Minute

const version = "v1"

// Tenant is the unit a request acts on, with the settings a service needs to
// compute dates and amounts.
type Tenant struct {
	ID           string `json:"id"`
	TimeZone     string `json:"tz"`
	DayStartHour int    `json:"dsh"`
	Currency     string `json:"cur"`
	Country      string `json:"cty"`
}

// Context is the gateway's decision about one request.
type Context struct {
	ClientID       string   `json:"cid"`
	UserID         string   `json:"uid"`
	GrantID        string   `json:"gid"`
	Scopes         []string `json:"scp"`
	Tenant         *Tenant  `json:"ten,omitempty"`
	OrganizationID string   `json:"org,omitempty"`
	RequestID      string   `json:"rid"`
	IssuedAt       int64    `json:"iat"`
}

// HasScope reports whether the grant includes scope.
func (c Context) HasScope(scope string) bool { return slices.Contains(c.Scopes, scope) }

// Key is one signing key.
type Key struct {
	ID     string
	Secret []byte
}

// Keyring signs with its first key and verifies with any, so keys can be
// rotated: add the new key second, roll out, move it first, roll out, drop
// the old one.
type Keyring struct {
	keys []Key
	now  func() time.Time
}

// ParseKeys reads "kid:base64secret[,kid:base64secret...]" (the
// INTERNAL_CONTEXT_KEYS format). Secrets must be at least 32 bytes.
func ParseKeys(spec string) (*Keyring, error) {
	var keys []Key
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		kid, enc, ok := strings.Cut(part, ":")
		if !ok || kid == "" || strings.ContainsAny(kid, ".") {
			return nil, errors.New("each key must be written kid:base64secret with a kid free of dots")
		}
		secret, err := base64.StdEncoding.DecodeString(enc)
		if err != nil {
			if secret, err = base64.RawURLEncoding.DecodeString(enc); err != nil {
				return nil, fmt.Errorf("key %q: secret is not base64", kid)
			}
		}
		if len(secret) < 32 {
			return nil, fmt.Errorf("key %q: secret must be at least 32 bytes", kid)
		}
		keys = append(keys, Key{ID: kid, Secret: secret})
	}
	if len(keys) == 0 {
		return nil, errors.New("at least one key is required")
	}
	return &Keyring{keys: keys, now: time.Now}, nil
}

// Sign encodes c (stamping IssuedAt) with the active key.
func (k *Keyring) Sign(c Context) string {
	c.IssuedAt = k.now().Unix()
	payload, _ := json.Marshal(c)
	key := k.keys[0]
	body := version + "." + key.ID + "." + base64.RawURLEncoding.EncodeToString(payload)
	return body + "." + base64.RawURLEncoding.EncodeToString(mac(key.Secret, body))
}

// ErrInvalid is returned for a missing, malformed, tampered, expired or
// unknown-key context.
var ErrInvalid = errors.New("invalid internal context")

// Verify checks the signature and age of a header value.
func (k *Keyring) Verify(value string) (Context, error) {
	parts := strings.Split(value, ".")
	if len(parts) != 4 || parts[0] != version {
		return Context{}, ErrInvalid
	}
	idx := slices.IndexFunc(k.keys, func(key Key) bool { return key.ID == parts[1] })
	if idx < 0 {
		return Context{}, ErrInvalid
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[3])
	if err != nil || !hmac.Equal(sig, mac(k.keys[idx].Secret, strings.Join(parts[:3], "."))) {
		return Context{}, ErrInvalid
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return Context{}, ErrInvalid
	}
	var c Context
	if err := json.Unmarshal(payload, &c); err != nil {
		return Context{}, ErrInvalid
	}
	age := k.now().Sub(time.Unix(c.IssuedAt, 0))
	if age > MaxAge || age < -MaxAge {
		return Context{}, ErrInvalid
	}
	return c, nil
}

func mac(secret []byte, body string) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(body))
	return h.Sum(nil)
}

const localsKey = "internalctx.context"

// Require is middleware that admits only requests carrying a valid context.
func Require(k *Keyring) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ic, err := k.Verify(c.Get(Header))
		if err != nil {
			return &httpx.Error{Status: http.StatusUnauthorized, Code: httpx.CodeInvalidToken, Description: "This service answers only requests forwarded by the gateway."}
		}
		c.Locals(localsKey, ic)
		return c.Next()
	}
}

// From returns the context that Require verified.
func From(c *fiber.Ctx) Context {
	ic, _ := c.Locals(localsKey).(Context)
	return ic
}
