// Package server assembles the identity process from its configuration:
// store, signing keys, fosite, HTTP surface. main and the end-to-end tests
// build it the same way.
package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/identity/internal/api"
	"partnerapi.dev/services/identity/internal/config"
	"partnerapi.dev/services/identity/internal/oauth"
	"partnerapi.dev/services/identity/internal/store"
)

// Parts are the assembled pieces, exposed for tests.
type Parts struct {
	// App is the public application (HTTP_ADDR).
	App *fiber.App
	// Internal is the internal application (INTERNAL_HTTP_ADDR): admin API
	// and metrics.
	Internal *fiber.App
	Store    *store.Store
	OAuth    *oauth.Server
	Keys     *oauth.Keys
	// ListCap bounds the lists in partner answers (tests lower it).
	ListCap *int
}

// Build assembles the service on an open database. It creates the first
// signing key when none exists.
func Build(ctx context.Context, cfg config.Config, db *database.DB, metrics http.Handler) (*Parts, error) {
	keyring := cfg.Keys()
	if keyring == nil {
		return nil, errors.New("configuration: INTERNAL_CONTEXT_KEYS is required to serve")
	}
	encKey, err := cfg.EncryptionKey()
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	st := store.New(db.Gorm)
	keys, err := oauth.NewKeys(st, encKey, cfg.AccessTokenTTL+time.Minute)
	if err != nil {
		return nil, err
	}
	if err := keys.Ensure(ctx); err != nil {
		return nil, fmt.Errorf("signing keys: %w", err)
	}
	srv := oauth.New(st, keys, oauth.Settings{
		Issuer: cfg.PublicBaseURL, Audience: cfg.TokenAudience,
		AccessTokenTTL: cfg.AccessTokenTTL, RefreshTokenTTL: cfg.RefreshTokenTTL, Secret: encKey,
	})
	listCap := api.DefaultListCap
	deps := api.Deps{
		Repo: st, ListCap: &listCap, OAuth: srv, Keyring: keyring, AdminToken: cfg.AdminToken.Reveal(),
		Secret: encKey, Secure: cfg.Secure(), GrantTTL: cfg.GrantTTL, PublicOrigin: cfg.PublicOrigin(),
		Sessions: api.SessionSettings{Idle: cfg.SessionIdleTimeout, Max: cfg.SessionMaxAge},
		Ready:    []httpx.Check{{Name: "database", Fn: db.Ping}},
		Metrics:  metrics,
	}
	if cfg.Events.URL != "" {
		client := &http.Client{Timeout: 2 * time.Second}
		deps.Activity = func(ctx context.Context, q contracts.ConnectedAppsQuery) (contracts.ConnectedAppsActivity, error) {
			var out contracts.ConnectedAppsActivity
			err := internalctx.PostJSON(ctx, client, keyring, cfg.Events.URL+contracts.ConnectedAppsPath, internalctx.Context{}, q, &out)
			return out, err
		}
	}
	return &Parts{App: api.New(deps), Internal: api.Internal(deps), Store: st, OAuth: srv, Keys: keys, ListCap: &listCap}, nil
}
