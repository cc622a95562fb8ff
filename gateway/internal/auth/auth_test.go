package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

type keyPair struct {
	kid  string
	alg  jose.SignatureAlgorithm
	priv crypto.Signer
}

func newKeys(t *testing.T) []keyPair {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	return []keyPair{{"ec", jose.ES256, ec}, {"rsa", jose.RS256, rk}, {"ed", jose.EdDSA, ed}}
}

func jwks(t *testing.T, keys []keyPair, fetches *atomic.Int32) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		var set jose.JSONWebKeySet
		for _, k := range keys {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.priv.Public(), KeyID: k.kid, Algorithm: string(k.alg), Use: "sig"})
		}
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func sign(t *testing.T, k keyPair, claims map[string]any) string {
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: k.priv}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", k.kid))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func testClaims(exp time.Time) map[string]any {
	return map[string]any{"iss": "https://as", "aud": []string{"https://api/v1"}, "sub": "u", "client_id": "c", "gid": "g", "scope": "a b", "exp": exp.Unix(), "iat": time.Now().Unix()}
}

func TestAcceptsEachAllowedAlgorithm(t *testing.T) {
	keys := newKeys(t)
	var fetches atomic.Int32
	srv := jwks(t, keys, &fetches)
	v := NewVerifier(Options{JWKSURL: srv.URL, Issuer: "https://as", Audience: "https://api/v1"})
	for _, k := range keys {
		tok, err := v.Verify(context.Background(), sign(t, k, testClaims(time.Now().Add(time.Minute))))
		if err != nil {
			t.Fatalf("%s: %v", k.alg, err)
		}
		if tok.Subject != "u" || tok.ClientID != "c" || tok.GrantID != "g" || !tok.HasScope("b") {
			t.Errorf("%s: %+v", k.alg, tok)
		}
	}
	if fetches.Load() != 1 {
		t.Errorf("JWKS fetched %d times", fetches.Load())
	}
}

func TestLeewayAndNotBefore(t *testing.T) {
	keys := newKeys(t)
	var fetches atomic.Int32
	srv := jwks(t, keys, &fetches)
	v := NewVerifier(Options{JWKSURL: srv.URL, Issuer: "https://as", Audience: "https://api/v1"})
	if _, err := v.Verify(context.Background(), sign(t, keys[0], testClaims(time.Now().Add(-10*time.Second)))); err != nil {
		t.Errorf("expired 10 s ago is within the leeway: %v", err)
	}
	if _, err := v.Verify(context.Background(), sign(t, keys[0], testClaims(time.Now().Add(-time.Minute)))); err == nil {
		t.Error("expired a minute ago passed")
	}
	c := testClaims(time.Now().Add(time.Hour))
	c["nbf"] = time.Now().Add(time.Minute).Unix()
	if _, err := v.Verify(context.Background(), sign(t, keys[0], c)); err == nil {
		t.Error("nbf a minute ahead passed")
	}
	c = testClaims(time.Now().Add(time.Hour))
	delete(c, "exp")
	if _, err := v.Verify(context.Background(), sign(t, keys[0], c)); err == nil {
		t.Error("a token without exp passed")
	}
	c = testClaims(time.Now().Add(time.Hour))
	delete(c, "gid")
	if _, err := v.Verify(context.Background(), sign(t, keys[0], c)); err == nil {
		t.Error("a token without gid passed")
	}
}

func TestCachedTokensExpireAndTheCacheIsBounded(t *testing.T) {
	keys := newKeys(t)
	var fetches atomic.Int32
	srv := jwks(t, keys, &fetches)
	now := time.Now()
	v := NewVerifier(Options{JWKSURL: srv.URL, Issuer: "https://as", Audience: "https://api/v1", MaxCachedTokens: 3, Now: func() time.Time { return now }})
	raw := sign(t, keys[0], testClaims(now.Add(time.Minute)))
	if _, err := v.Verify(context.Background(), raw); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	var ae *Error
	if _, err := v.Verify(context.Background(), raw); !errors.As(err, &ae) {
		t.Fatalf("a cached token past exp + leeway passed: %v", err)
	}
	for i := 0; i < 10; i++ {
		c := testClaims(now.Add(time.Hour))
		c["jti"] = string(rune('a' + i))
		if _, err := v.Verify(context.Background(), sign(t, keys[1], c)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(v.cache); n > 3 {
		t.Errorf("cache holds %d tokens, bound 3", n)
	}
}

func TestUnknownKidRefetchesAtMostOncePerInterval(t *testing.T) {
	keys := newKeys(t)
	var fetches atomic.Int32
	srv := jwks(t, keys[:1], &fetches)
	v := NewVerifier(Options{JWKSURL: srv.URL, Issuer: "https://as", Audience: "https://api/v1", RefetchInterval: time.Hour})
	for i := 0; i < 5; i++ {
		if _, err := v.Verify(context.Background(), sign(t, keys[1], testClaims(time.Now().Add(time.Minute)))); err == nil {
			t.Fatal("a token of an unpublished key passed")
		}
	}
	if fetches.Load() != 1 {
		t.Errorf("JWKS fetched %d times", fetches.Load())
	}
}

func TestKeyUnavailable(t *testing.T) {
	v := NewVerifier(Options{JWKSURL: "http://127.0.0.1:1/jwks", Issuer: "https://as", Audience: "https://api/v1"})
	keys := newKeys(t)
	if _, err := v.Verify(context.Background(), sign(t, keys[0], testClaims(time.Now().Add(time.Minute)))); !errors.Is(err, ErrKeysUnavailable) {
		t.Errorf("got %v", err)
	}
}

func TestTokenCarriesItsIDAndFamily(t *testing.T) {
	keys := newKeys(t)
	var fetches atomic.Int32
	v := NewVerifier(Options{JWKSURL: jwks(t, keys, &fetches).URL, Issuer: "https://as", Audience: "https://api/v1"})
	c := testClaims(time.Now().Add(time.Minute))
	c["jti"], c["fid"] = "token-1", "family-1"
	tok, err := v.Verify(context.Background(), sign(t, keys[0], c))
	if err != nil || tok.ID != "token-1" || tok.Family != "family-1" {
		t.Fatalf("%v %+v", err, tok)
	}
}
