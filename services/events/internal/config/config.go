// Package config is the events service's configuration, read once from the
// environment; a bad value stops the process with the variable's name.
package config

import (
	"errors"
	"net/url"
	"strings"
	"time"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/internalctx"
)

// Database is what migrate needs.
type Database struct {
	Database database.Config
}

// Serve is what serve needs.
type Serve struct {
	HTTPAddr            string `env:"HTTP_ADDR, default=127.0.0.1:8087"`
	InternalHTTPAddr    string `env:"INTERNAL_HTTP_ADDR, default=127.0.0.1:9087"`
	Database            database.Config
	InternalContextKeys config.Secret `env:"INTERNAL_CONTEXT_KEYS, required"`
	// EventsToken is the bearer token the services' relays send to the
	// append API.
	EventsToken config.Secret `env:"EVENTS_TOKEN, required"`
	// RetentionInterval is how often serve drops partitions past the
	// retention and creates the coming ones.
	RetentionInterval time.Duration `env:"EVENTS_RETENTION_INTERVAL, default=1h"`
	// IdentityURL is identity's base URL: each webhook delivery checks the
	// endpoint's grant there first.
	IdentityURL string `env:"IDENTITY_URL, required"`
	// WebhookParallel is how many deliveries one replica sends at once.
	WebhookParallel int `env:"WEBHOOK_PARALLEL, default=16"`
	// WebhookGrantCacheTTL is how long a grant read from identity is
	// reused: a revocation stops deliveries within it.
	WebhookGrantCacheTTL time.Duration `env:"WEBHOOK_GRANT_CACHE_TTL, default=5s"`
	// WebhooksAllowLoopback lets endpoints be http:// on loopback and lets
	// deliveries reach loopback addresses. For tests and local runs only:
	// never set it where partners create endpoints.
	WebhooksAllowLoopback bool `env:"WEBHOOKS_ALLOW_LOOPBACK, default=false"`
}

// Validate checks the secrets' shapes.
func (c *Serve) Validate() error {
	if _, err := internalctx.ParseKeys(c.InternalContextKeys.Reveal()); err != nil {
		return errors.New("INTERNAL_CONTEXT_KEYS: " + err.Error())
	}
	if len(c.EventsToken.Reveal()) < 16 {
		return errors.New("EVENTS_TOKEN must be at least 16 characters")
	}
	u, err := url.Parse(c.IdentityURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("IDENTITY_URL must be an http(s) URL")
	}
	c.IdentityURL = strings.TrimSuffix(c.IdentityURL, "/")
	if c.WebhookParallel < 1 || c.WebhookParallel > 256 {
		return errors.New("WEBHOOK_PARALLEL must be from 1 to 256")
	}
	if c.WebhookGrantCacheTTL < 0 || c.WebhookGrantCacheTTL > time.Minute {
		return errors.New("WEBHOOK_GRANT_CACHE_TTL must be from 0 to 1m")
	}
	if c.RetentionInterval < time.Minute {
		return errors.New("EVENTS_RETENTION_INTERVAL must be at least 1m")
	}
	return nil
}
