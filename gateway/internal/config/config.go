// Package config is the gateway's configuration: one struct filled from the
// environment once at start-up, validated so a bad value stops the process
// with a message naming the variable.
package config

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/internalctx"
)

// Config is everything the gateway reads from the environment.
type Config struct {
	HTTPAddr         string `env:"HTTP_ADDR, default=127.0.0.1:8080"`
	InternalHTTPAddr string `env:"INTERNAL_HTTP_ADDR, default=127.0.0.1:9080"`
	PublicBaseURL    string `env:"PUBLIC_BASE_URL, default=http://127.0.0.1:8080"`
	// TokenAudience defaults to PublicBaseURL + "/v1".
	TokenAudience string `env:"TOKEN_AUDIENCE"`
	// TokenIssuer defaults to PublicBaseURL.
	TokenIssuer string `env:"TOKEN_ISSUER"`

	RedisURL            config.Secret `env:"REDIS_URL, required"`
	InternalContextKeys config.Secret `env:"INTERNAL_CONTEXT_KEYS, required"`

	IdentityURL      string `env:"IDENTITY_URL, required"`
	OrdersURL        string `env:"ORDERS_URL"`
	AccountingURL    string `env:"ACCOUNTING_URL"`
	MenusURL         string `env:"MENUS_URL"`
	CatalogImportURL string `env:"CATALOG_IMPORT_URL"`
	EventsURL        string `env:"EVENTS_URL"`

	RateLimitPerMinute       int `env:"RATE_LIMIT_PER_MINUTE, default=60"`
	UnauthRateLimitPerMinute int `env:"UNAUTH_RATE_LIMIT_PER_MINUTE, default=300"`
	// RateLimitKeyPrefix starts the limiter's Redis keys, so deployments
	// (or test stacks) sharing one Redis keep their counts apart.
	RateLimitKeyPrefix string `env:"RATE_LIMIT_KEY_PREFIX, default=gateway:rl:"`

	GrantCacheTTL         time.Duration `env:"GRANT_CACHE_TTL, default=5s"`
	GrantNegativeCacheTTL time.Duration `env:"GRANT_NEGATIVE_CACHE_TTL, default=2s"`
	// GrantChangesInterval is how often identity's list of grant changes
	// is read, so a revocation holds within about this long (0: never
	// read; revocations then hold within GRANT_CACHE_TTL).
	GrantChangesInterval   time.Duration `env:"GRANT_CHANGES_INTERVAL, default=250ms"`
	UpstreamTimeout        time.Duration `env:"UPSTREAM_TIMEOUT, default=10s"`
	UpstreamConnectTimeout time.Duration `env:"UPSTREAM_CONNECT_TIMEOUT, default=2s"`

	// ClientAddressHeader names a header set by a trusted ingress holding
	// the caller's address (last comma-separated entry wins); empty means
	// the TCP peer address. Used for the unauthenticated per-address limit.
	ClientAddressHeader string `env:"CLIENT_ADDRESS_HEADER"`

	// MenuNamingSet is "A" (default) or "B"; see docs/gateway.md.
	MenuNamingSet string `env:"MENU_NAMING_SET, default=A"`

	// DeprecatedOperations marks operations as retiring: a JSON object from
	// operation id to {"deprecation": RFC 3339, "sunset": RFC 3339, "link": URL}.
	DeprecatedOperations string `env:"DEPRECATED_OPERATIONS"`
}

// Deprecation is when one operation was deprecated, when it stops answering,
// and the notice describing its replacement.
type Deprecation struct {
	Deprecation time.Time `json:"deprecation"`
	Sunset      time.Time `json:"sunset"`
	Link        string    `json:"link"`
}

// Validate fills derived defaults and checks values.
func (c *Config) Validate() error {
	c.PublicBaseURL = strings.TrimRight(c.PublicBaseURL, "/")
	if err := absoluteURL(c.PublicBaseURL); err != nil {
		return fmt.Errorf("PUBLIC_BASE_URL %w", err)
	}
	if c.TokenAudience == "" {
		c.TokenAudience = c.PublicBaseURL + "/v1"
	}
	if c.TokenIssuer == "" {
		c.TokenIssuer = c.PublicBaseURL
	}
	for name, v := range map[string]*string{"IDENTITY_URL": &c.IdentityURL, "ORDERS_URL": &c.OrdersURL, "ACCOUNTING_URL": &c.AccountingURL, "MENUS_URL": &c.MenusURL, "CATALOG_IMPORT_URL": &c.CatalogImportURL, "EVENTS_URL": &c.EventsURL} {
		*v = strings.TrimRight(*v, "/")
		if *v == "" {
			continue
		}
		if err := absoluteURL(*v); err != nil {
			return fmt.Errorf("%s %w", name, err)
		}
	}
	if _, err := internalctx.ParseKeys(c.InternalContextKeys.Reveal()); err != nil {
		return fmt.Errorf("INTERNAL_CONTEXT_KEYS: %w", err)
	}
	if c.RateLimitPerMinute < 1 {
		return fmt.Errorf("RATE_LIMIT_PER_MINUTE must be at least 1")
	}
	if c.UnauthRateLimitPerMinute < 1 {
		return fmt.Errorf("UNAUTH_RATE_LIMIT_PER_MINUTE must be at least 1")
	}
	if c.GrantCacheTTL < 0 || c.GrantNegativeCacheTTL < 0 || c.GrantChangesInterval < 0 {
		return fmt.Errorf("GRANT_CACHE_TTL, GRANT_NEGATIVE_CACHE_TTL and GRANT_CHANGES_INTERVAL must not be negative")
	}
	if c.UpstreamTimeout <= 0 || c.UpstreamConnectTimeout <= 0 {
		return fmt.Errorf("UPSTREAM_TIMEOUT and UPSTREAM_CONNECT_TIMEOUT must be positive")
	}
	c.MenuNamingSet = strings.ToUpper(strings.TrimSpace(c.MenuNamingSet))
	if c.MenuNamingSet != "A" && c.MenuNamingSet != "B" {
		return fmt.Errorf("MENU_NAMING_SET must be A or B")
	}
	if _, err := c.Deprecations(); err != nil {
		return err
	}
	return nil
}

// Deprecations parses DEPRECATED_OPERATIONS.
func (c *Config) Deprecations() (map[string]Deprecation, error) {
	out := map[string]Deprecation{}
	if strings.TrimSpace(c.DeprecatedOperations) == "" {
		return out, nil
	}
	if err := json.Unmarshal([]byte(c.DeprecatedOperations), &out); err != nil {
		return nil, fmt.Errorf("DEPRECATED_OPERATIONS must be a JSON object of operation id to {deprecation, sunset, link}: %w", err)
	}
	for id, d := range out {
		if d.Deprecation.IsZero() || d.Sunset.IsZero() || d.Link == "" {
			return nil, fmt.Errorf("DEPRECATED_OPERATIONS %q needs deprecation, sunset and link", id)
		}
	}
	return out, nil
}

func absoluteURL(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("must be an absolute http(s) URL")
	}
	return nil
}
