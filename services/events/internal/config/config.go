// Package config is the events service's configuration, read once from the
// environment; a bad value stops the process with the variable's name.
package config

import (
	"errors"
	"net/url"
	"strings"
	"time"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/services/events/internal/sealed"
)

// WebhookSecretKeys is the key ring that seals webhook signing secrets at
// rest: "kid:base64 of 32 bytes", comma-separated; the first one seals,
// every one opens (rotation: add the new key first, run migrate, then drop
// the old one).
type WebhookSecretKeys struct {
	Keys config.Secret `env:"WEBHOOK_SECRET_KEYS, required"`
}

// Keyring parses the keys.
func (w WebhookSecretKeys) Keyring() (*sealed.Keyring, error) {
	k, err := sealed.Parse(w.Keys.Reveal())
	if err != nil {
		return nil, errors.New("WEBHOOK_SECRET_KEYS: " + err.Error())
	}
	return k, nil
}

// Validate checks the key ring's shape.
func (w *WebhookSecretKeys) Validate() error {
	_, err := w.Keyring()
	return err
}

// Serve is what serve needs.
type Serve struct {
	HTTPAddr         string `env:"HTTP_ADDR, default=127.0.0.1:8087"`
	InternalHTTPAddr string `env:"INTERNAL_HTTP_ADDR, default=127.0.0.1:9087"`
	service.Config
	WebhookSecretKeys WebhookSecretKeys
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
	// WebhookPerEndpoint is how many of them may go to one endpoint: a
	// slow endpoint holds at most that many.
	WebhookPerEndpoint int `env:"WEBHOOK_PARALLEL_PER_ENDPOINT, default=4"`
	// WebhookGrantCacheTTL is how long a grant read from identity is
	// reused: a revocation stops deliveries within it.
	WebhookGrantCacheTTL time.Duration `env:"WEBHOOK_GRANT_CACHE_TTL, default=5s"`
	// MenuNamingSet is the contract's menu naming set the deployment serves
	// (A or B), as the gateway's and the menus service's: menu events in
	// the feed and in webhook bodies use its names.
	MenuNamingSet string `env:"MENU_NAMING_SET, default=A"`
	// WebhooksAllowLoopback lets endpoints be http:// on loopback and lets
	// deliveries reach loopback addresses. For tests and local runs only:
	// never set it where partners create endpoints.
	WebhooksAllowLoopback bool `env:"WEBHOOKS_ALLOW_LOOPBACK, default=false"`
}

// Addrs are the public and internal listen addresses.
func (c *Serve) Addrs() (string, string) { return c.HTTPAddr, c.InternalHTTPAddr }

// Validate checks the secrets' shapes.
func (c *Serve) Validate() error {
	if err := c.Config.Validate(); err != nil {
		return err
	}
	if _, err := c.WebhookSecretKeys.Keyring(); err != nil {
		return err
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
	if c.WebhookPerEndpoint < 1 || c.WebhookPerEndpoint > c.WebhookParallel {
		return errors.New("WEBHOOK_PARALLEL_PER_ENDPOINT must be from 1 to WEBHOOK_PARALLEL")
	}
	if c.WebhookGrantCacheTTL < 0 || c.WebhookGrantCacheTTL > time.Minute {
		return errors.New("WEBHOOK_GRANT_CACHE_TTL must be from 0 to 1m")
	}
	if c.MenuNamingSet != "A" && c.MenuNamingSet != "B" {
		return errors.New("MENU_NAMING_SET must be A or B")
	}
	if c.RetentionInterval < time.Minute {
		return errors.New("EVENTS_RETENTION_INTERVAL must be at least 1m")
	}
	return nil
}
