// Package auth verifies partner access tokens: JWTs (RFC 9068) signed by the
// identity service with a key from its JWKS. Verified tokens are remembered
// by their SHA-256 until they expire, so the hot path does no cryptography.
package auth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
)

// Leeway is the clock skew tolerated on exp, nbf and iat.
const Leeway = 30 * time.Second

// allowedAlgs are the only signature algorithms accepted; "none" and the HMAC
// family can never verify.
var allowedAlgs = []jose.SignatureAlgorithm{jose.ES256, jose.RS256, jose.EdDSA}

// Token is what a verified access token says.
type Token struct {
	Subject  string
	ClientID string
	GrantID  string
	Scopes   []string
	Expiry   time.Time
	// ID (jti) and Family (fid) name the token in identity's list of revoked
	// tokens; Family is empty in tokens issued before families were named.
	ID     string
	Family string
}

// HasScope reports whether the token carries scope.
func (t *Token) HasScope(s string) bool {
	for _, x := range t.Scopes {
		if x == s {
			return true
		}
	}
	return false
}

// Error is a token that does not verify; Description is safe to show.
type Error struct{ Description string }

func (e *Error) Error() string { return e.Description }

func invalid(format string, args ...any) error {
	return &Error{Description: fmt.Sprintf(format, args...)}
}

// ErrKeysUnavailable means the JWKS could not be read; the caller answers 503.
var ErrKeysUnavailable = errors.New("signing keys unavailable")

// Options configures a Verifier.
type Options struct {
	JWKSURL  string
	Issuer   string
	Audience string
	Client   *http.Client
	// MaxCachedTokens bounds the verified-token cache (default 100,000).
	MaxCachedTokens int
	// RefetchInterval is the least time between two JWKS fetches caused by
	// unknown key ids (default 10 s).
	RefetchInterval time.Duration
	// MaxKeyAge is how long a fetched JWKS is used before a refresh (default 10 min).
	MaxKeyAge time.Duration
	Now       func() time.Time
}

// Verifier checks bearer tokens.
type Verifier struct {
	opts Options

	keyMu     sync.Mutex
	keys      map[string]jose.JSONWebKey
	fetchedAt time.Time
	lastTry   time.Time

	cacheMu sync.RWMutex
	cache   map[[32]byte]*Token
}

// NewVerifier returns a verifier; it fetches keys lazily.
func NewVerifier(o Options) *Verifier {
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 5 * time.Second}
	}
	if o.MaxCachedTokens == 0 {
		o.MaxCachedTokens = 100_000
	}
	if o.RefetchInterval == 0 {
		o.RefetchInterval = 10 * time.Second
	}
	if o.MaxKeyAge == 0 {
		o.MaxKeyAge = 10 * time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Verifier{opts: o, cache: map[[32]byte]*Token{}}
}

// Verify checks raw (the bearer token without "Bearer ") and returns its
// claims, a *Error when the token is invalid, or ErrKeysUnavailable.
func (v *Verifier) Verify(ctx context.Context, raw string) (*Token, error) {
	sum := sha256.Sum256([]byte(raw))
	now := v.opts.Now()
	v.cacheMu.RLock()
	t, ok := v.cache[sum]
	v.cacheMu.RUnlock()
	if ok {
		if now.Before(t.Expiry.Add(Leeway)) {
			return t, nil
		}
		return nil, invalid("The access token has expired; obtain a new one.")
	}
	t, err := v.verify(ctx, raw, now)
	if err != nil {
		return nil, err
	}
	v.remember(sum, t, now)
	return t, nil
}

type claims struct {
	jwt.Claims
	ClientID string `json:"client_id"`
	Scope    string `json:"scope"`
	GrantID  string `json:"gid"`
	Family   string `json:"fid"`
}

func (v *Verifier) verify(ctx context.Context, raw string, now time.Time) (*Token, error) {
	if strings.Count(raw, ".") != 2 {
		return nil, invalid("The access token is not a signed JWT.")
	}
	tok, err := jwt.ParseSigned(raw, allowedAlgs)
	if err != nil {
		return nil, invalid("The access token is malformed or uses an unsupported signature algorithm.")
	}
	if len(tok.Headers) != 1 {
		return nil, invalid("The access token must have exactly one signature.")
	}
	h := tok.Headers[0]
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); !strings.EqualFold(typ, "at+jwt") && !strings.EqualFold(typ, "application/at+jwt") {
		return nil, invalid("The token is not an access token (typ must be at+jwt).")
	}
	key, err := v.key(ctx, h.KeyID, h.Algorithm)
	if err != nil {
		return nil, err
	}
	var c claims
	if err := tok.Claims(key.Key, &c); err != nil {
		if errors.Is(err, jose.ErrCryptoFailure) {
			return nil, invalid("The access token signature does not verify.")
		}
		return nil, invalid("The access token claims are malformed.")
	}
	if c.Expiry == nil {
		return nil, invalid("The access token has no expiry.")
	}
	err = c.Claims.ValidateWithLeeway(jwt.Expected{Issuer: v.opts.Issuer, AnyAudience: jwt.Audience{v.opts.Audience}, Time: now}, Leeway)
	switch {
	case errors.Is(err, jwt.ErrExpired):
		return nil, invalid("The access token has expired; obtain a new one.")
	case errors.Is(err, jwt.ErrNotValidYet), errors.Is(err, jwt.ErrIssuedInTheFuture):
		return nil, invalid("The access token is not valid yet.")
	case errors.Is(err, jwt.ErrInvalidAudience):
		return nil, invalid("The access token was issued for another audience.")
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return nil, invalid("The access token was issued by an unknown issuer.")
	case err != nil:
		return nil, invalid("The access token claims are invalid.")
	}
	if c.Subject == "" || c.ClientID == "" || c.GrantID == "" {
		return nil, invalid("The access token lacks sub, client_id or gid.")
	}
	return &Token{Subject: c.Subject, ClientID: c.ClientID, GrantID: c.GrantID, Scopes: strings.Fields(c.Scope), Expiry: c.Expiry.Time(),
		ID: c.ID, Family: c.Family}, nil
}

func (v *Verifier) remember(sum [32]byte, t *Token, now time.Time) {
	v.cacheMu.Lock()
	defer v.cacheMu.Unlock()
	if len(v.cache) >= v.opts.MaxCachedTokens {
		for k, e := range v.cache { // drop expired entries first
			if !now.Before(e.Expiry.Add(Leeway)) {
				delete(v.cache, k)
			}
		}
		for k := range v.cache { // still full: drop arbitrary entries (map order is random)
			if len(v.cache) < v.opts.MaxCachedTokens {
				break
			}
			delete(v.cache, k)
		}
	}
	v.cache[sum] = t
}

// key finds the verification key for kid, refetching the JWKS when kid is
// unknown (at most once per RefetchInterval) or the keys are old.
func (v *Verifier) key(ctx context.Context, kid, alg string) (jose.JSONWebKey, error) {
	v.keyMu.Lock()
	defer v.keyMu.Unlock()
	now := v.opts.Now()
	if k, ok := v.lookup(kid, alg); ok && now.Sub(v.fetchedAt) < v.opts.MaxKeyAge {
		return k, nil
	}
	if v.keys == nil || now.Sub(v.lastTry) >= v.opts.RefetchInterval {
		v.lastTry = now
		if err := v.fetch(ctx); err != nil {
			slog.WarnContext(ctx, "fetching the JWKS failed", "error", err)
			if v.keys == nil {
				return jose.JSONWebKey{}, ErrKeysUnavailable
			}
		} else {
			v.fetchedAt = now
		}
	}
	if k, ok := v.lookup(kid, alg); ok {
		return k, nil
	}
	return jose.JSONWebKey{}, invalid("The access token was signed with an unknown key.")
}

func (v *Verifier) lookup(kid, alg string) (jose.JSONWebKey, bool) {
	if kid == "" {
		// Without a kid the token can only match when exactly one key exists.
		if len(v.keys) != 1 {
			return jose.JSONWebKey{}, false
		}
		for _, k := range v.keys {
			return k, k.Algorithm == "" || k.Algorithm == alg
		}
	}
	k, ok := v.keys[kid]
	if !ok || (k.Algorithm != "" && k.Algorithm != alg) {
		return jose.JSONWebKey{}, false
	}
	return k, true
}

func (v *Verifier) fetch(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.opts.JWKSURL, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := v.opts.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("JWKS answered %d", resp.StatusCode)
	}
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 1<<20)).Decode(&set); err != nil {
		return fmt.Errorf("decode JWKS: %w", err)
	}
	keys := map[string]jose.JSONWebKey{}
	for _, k := range set.Keys {
		if k.Use != "" && k.Use != "sig" || !k.Valid() || !k.IsPublic() {
			continue
		}
		switch jose.SignatureAlgorithm(k.Algorithm) {
		case jose.ES256, jose.RS256, jose.EdDSA, "":
			keys[k.KeyID] = k
		}
	}
	v.keys = keys
	return nil
}

// Ping fetches the JWKS, for readiness.
func (v *Verifier) Ping(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.opts.JWKSURL, nil)
	if err != nil {
		return err
	}
	otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := v.opts.Client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("JWKS answered %d", resp.StatusCode)
	}
	return nil
}
