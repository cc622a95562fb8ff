// Package internalctx carries what the gateway decided about a request (who
// calls, under which grant, for which tenant) to the service that answers it,
// in a header signed with a shared key. Services refuse requests without a
// valid one, so a pod reached directly inside the cluster gives nothing away.
package internalctx

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	// macs holds reusable HMAC states of the signing key (keys[0]).
	macs sync.Pool
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
	k := &Keyring{keys: keys, now: time.Now}
	secret := keys[0].Secret
	k.macs.New = func() any { return hmac.New(sha256.New, secret) }
	return k, nil
}

// Sign encodes c (stamping IssuedAt) with the active key.
//
// The payload is the JSON encoding of c, byte for byte what encoding/json
// gives, written without reflection; the HMAC state is reused from a pool.
func (k *Keyring) Sign(c Context) string {
	c.IssuedAt = k.now().Unix()
	key := k.keys[0]
	var scratch [512]byte
	payload := appendContextJSON(scratch[:0], &c)
	enc := base64.RawURLEncoding
	buf := make([]byte, 0, len(version)+len(key.ID)+3+enc.EncodedLen(len(payload))+enc.EncodedLen(sha256.Size))
	buf = append(buf, version...)
	buf = append(buf, '.')
	buf = append(buf, key.ID...)
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, payload)
	var sum [sha256.Size]byte
	h, _ := k.macs.Get().(hash.Hash)
	if h == nil { // a Keyring not made by ParseKeys
		h = hmac.New(sha256.New, key.Secret)
	}
	h.Reset()
	h.Write(buf)
	h.Sum(sum[:0])
	k.macs.Put(h)
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, sum[:])
	return string(buf)
}

// appendContextJSON appends json.Marshal(c) to dst.
func appendContextJSON(dst []byte, c *Context) []byte {
	dst = append(dst, `{"cid":`...)
	dst = appendJSONString(dst, c.ClientID)
	dst = append(dst, `,"uid":`...)
	dst = appendJSONString(dst, c.UserID)
	dst = append(dst, `,"gid":`...)
	dst = appendJSONString(dst, c.GrantID)
	dst = append(dst, `,"scp":`...)
	if c.Scopes == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i, s := range c.Scopes {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, s)
		}
		dst = append(dst, ']')
	}
	if t := c.Tenant; t != nil {
		dst = append(dst, `,"ten":{"id":`...)
		dst = appendJSONString(dst, t.ID)
		dst = append(dst, `,"tz":`...)
		dst = appendJSONString(dst, t.TimeZone)
		dst = append(dst, `,"dsh":`...)
		dst = strconv.AppendInt(dst, int64(t.DayStartHour), 10)
		dst = append(dst, `,"cur":`...)
		dst = appendJSONString(dst, t.Currency)
		dst = append(dst, `,"cty":`...)
		dst = appendJSONString(dst, t.Country)
		dst = append(dst, '}')
	}
	if c.OrganizationID != "" {
		dst = append(dst, `,"org":`...)
		dst = appendJSONString(dst, c.OrganizationID)
	}
	dst = append(dst, `,"rid":`...)
	dst = appendJSONString(dst, c.RequestID)
	dst = append(dst, `,"iat":`...)
	dst = strconv.AppendInt(dst, c.IssuedAt, 10)
	return append(dst, '}')
}

// appendJSONString appends s as encoding/json writes it: plain printable
// ASCII directly, anything that needs escaping through encoding/json.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b >= 0x7f || b == '"' || b == '\\' || b == '<' || b == '>' || b == '&' {
			q, _ := json.Marshal(s)
			return append(dst, q...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
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
		c.SetUserContext(NewContext(c.UserContext(), ic))
		httpx.SetClientID(c, ic.ClientID)
		return c.Next()
	}
}

type ctxKey struct{}

// NewContext returns ctx carrying c, so code below the handler (a store
// recording events) knows whose authorization the request acts under.
func NewContext(ctx context.Context, c Context) context.Context {
	return context.WithValue(ctx, ctxKey{}, c)
}

// FromContext returns the context Require verified for the request ctx
// belongs to, if any.
func FromContext(ctx context.Context) (Context, bool) {
	c, ok := ctx.Value(ctxKey{}).(Context)
	return c, ok
}

// From returns the context that Require verified.
func From(c *fiber.Ctx) Context {
	ic, _ := c.Locals(localsKey).(Context)
	return ic
}

// PathTenant returns the verified context and the restaurant of the path
// (":restaurantId", in lower case) when the gateway authorized that
// restaurant. Any other request gets httpx.NotFound(), the one answer for
// what the caller may not see.
func PathTenant(c *fiber.Ctx) (Context, string, error) {
	ic := From(c)
	id := strings.ToLower(c.Params("restaurantId"))
	if ic.Tenant == nil || strings.ToLower(ic.Tenant.ID) != id {
		return Context{}, "", httpx.NotFound()
	}
	return ic, id, nil
}
