package oauth

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"

	"partnerapi.dev/services/identity/internal/store"
)

// Alg is the access token signature algorithm.
const Alg = "ES256"

// KeyStore is where signing keys live.
type KeyStore interface {
	SigningKeys(ctx context.Context) ([]store.SigningKeyRow, error)
	AddSigningKey(ctx context.Context, k store.SigningKeyRow, retireAfter time.Duration, onlyIfNone bool) (bool, error)
}

type signingKey struct {
	kid     string
	status  string
	private *ecdsa.PrivateKey
	public  jose.JSONWebKey
}

// Keys holds the token signing keys, sealed at rest with AES-GCM under
// SIGNING_KEY_ENCRYPTION_KEY and cached in memory for a short while, so
// several replicas converge on a rotation within CacheFor.
type Keys struct {
	store       KeyStore
	aead        cipher.AEAD
	retireAfter time.Duration
	CacheFor    time.Duration

	mu       sync.RWMutex
	active   *signingKey
	byKid    map[string]*signingKey
	order    []string
	loadedAt time.Time
}

// NewKeys returns the keyring. retireAfter is how long a replaced key stays
// published: at least the access token lifetime.
func NewKeys(ks KeyStore, encryptionKey []byte, retireAfter time.Duration) (*Keys, error) {
	block, err := aes.NewCipher(encryptionKey)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Keys{store: ks, aead: aead, retireAfter: retireAfter, CacheFor: 30 * time.Second}, nil
}

// Ensure creates the first signing key when none is active.
func (k *Keys) Ensure(ctx context.Context) error {
	row, err := k.generate()
	if err != nil {
		return err
	}
	if _, err := k.store.AddSigningKey(ctx, row, k.retireAfter, true); err != nil {
		return err
	}
	return k.Reload(ctx)
}

// Rotate makes a new key active; the old one keeps verifying and stays in
// the JWKS until its tokens have expired. It returns the new kid.
func (k *Keys) Rotate(ctx context.Context) (string, error) {
	row, err := k.generate()
	if err != nil {
		return "", err
	}
	if _, err := k.store.AddSigningKey(ctx, row, k.retireAfter, false); err != nil {
		return "", err
	}
	return row.Kid, k.Reload(ctx)
}

func (k *Keys) generate() (store.SigningKeyRow, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return store.SigningKeyRow{}, err
	}
	kid := uuid.NewString()
	pub, err := json.Marshal(jose.JSONWebKey{Key: &priv.PublicKey, KeyID: kid, Algorithm: Alg, Use: "sig"})
	if err != nil {
		return store.SigningKeyRow{}, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return store.SigningKeyRow{}, err
	}
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return store.SigningKeyRow{}, err
	}
	sealed := k.aead.Seal(nonce, nonce, der, []byte(kid))
	return store.SigningKeyRow{Kid: kid, Alg: Alg, PublicJWK: pub, PrivateEnc: sealed}, nil
}

func (k *Keys) open(row store.SigningKeyRow) (*ecdsa.PrivateKey, error) {
	n := k.aead.NonceSize()
	if len(row.PrivateEnc) < n {
		return nil, errors.New("sealed key too short")
	}
	der, err := k.aead.Open(nil, row.PrivateEnc[:n], row.PrivateEnc[n:], []byte(row.Kid))
	if err != nil {
		return nil, fmt.Errorf("signing key %s cannot be opened with SIGNING_KEY_ENCRYPTION_KEY", row.Kid)
	}
	p, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, err
	}
	ec, ok := p.(*ecdsa.PrivateKey)
	if !ok {
		return nil, errors.New("signing key is not ECDSA")
	}
	return ec, nil
}

// Reload reads the keys from the database now.
func (k *Keys) Reload(ctx context.Context) error {
	rows, err := k.store.SigningKeys(ctx)
	if err != nil {
		return err
	}
	byKid := map[string]*signingKey{}
	var order []string
	var active *signingKey
	for _, r := range rows {
		var pub jose.JSONWebKey
		if err := json.Unmarshal(r.PublicJWK, &pub); err != nil {
			return err
		}
		sk := &signingKey{kid: r.Kid, status: r.Status, public: pub}
		if r.Status == "active" {
			if sk.private, err = k.open(r); err != nil {
				return err
			}
			active = sk
		}
		byKid[r.Kid] = sk
		order = append(order, r.Kid)
	}
	if active == nil {
		return errors.New("no active signing key")
	}
	k.mu.Lock()
	k.active, k.byKid, k.order, k.loadedAt = active, byKid, order, time.Now()
	k.mu.Unlock()
	return nil
}

func (k *Keys) fresh(ctx context.Context) error {
	k.mu.RLock()
	stale := k.active == nil || time.Since(k.loadedAt) > k.CacheFor
	k.mu.RUnlock()
	if stale {
		return k.Reload(ctx)
	}
	return nil
}

// signer returns the active key.
func (k *Keys) signer(ctx context.Context) (*signingKey, error) {
	if err := k.fresh(ctx); err != nil {
		return nil, err
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.active, nil
}

// verifier returns the public key for kid, reloading once on a miss (a
// rotation on another replica).
func (k *Keys) verifier(ctx context.Context, kid string) (*jose.JSONWebKey, error) {
	if err := k.fresh(ctx); err != nil {
		return nil, err
	}
	for attempt := 0; attempt < 2; attempt++ {
		k.mu.RLock()
		sk := k.byKid[kid]
		k.mu.RUnlock()
		if sk != nil {
			return &sk.public, nil
		}
		if attempt == 0 {
			if err := k.Reload(ctx); err != nil {
				return nil, err
			}
		}
	}
	return nil, errors.New("unknown signing key")
}

// JWKS returns the published key set: the active key and retiring keys.
func (k *Keys) JWKS(ctx context.Context) (jose.JSONWebKeySet, error) {
	if err := k.fresh(ctx); err != nil {
		return jose.JSONWebKeySet{}, err
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	for _, kid := range k.order {
		set.Keys = append(set.Keys, k.byKid[kid].public)
	}
	return set, nil
}

// ActiveKid is the kid new tokens are signed with.
func (k *Keys) ActiveKid(ctx context.Context) (string, error) {
	sk, err := k.signer(ctx)
	if err != nil {
		return "", err
	}
	return sk.kid, nil
}
