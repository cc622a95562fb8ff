// Package config is the identity service's one configuration struct, read
// from the environment and validated at start-up.
package config

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	pkgconfig "partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/services/contracts/eventsclient"
)

// Config is everything the identity process reads from its environment.
type Config struct {
	HTTPAddr         string `env:"HTTP_ADDR, default=127.0.0.1:8081"`
	InternalHTTPAddr string `env:"INTERNAL_HTTP_ADDR, default=127.0.0.1:9081"`
	service.Config
	PublicBaseURL           string           `env:"PUBLIC_BASE_URL, default=http://127.0.0.1:8080"`
	TokenAudience           string           `env:"TOKEN_AUDIENCE"`
	AdminToken              pkgconfig.Secret `env:"ADMIN_TOKEN"`
	SigningKeyEncryptionKey pkgconfig.Secret `env:"SIGNING_KEY_ENCRYPTION_KEY"`
	AccessTokenTTL          time.Duration    `env:"ACCESS_TOKEN_TTL, default=15m"`
	RefreshTokenTTL         time.Duration    `env:"REFRESH_TOKEN_TTL, default=720h"`
	GrantTTL                time.Duration    `env:"GRANT_TTL, default=8760h"`
	// A signed-in page session ends after SESSION_IDLE_TIMEOUT without a
	// page, and SESSION_MAX_AGE after sign-in in any case.
	SessionIdleTimeout time.Duration `env:"SESSION_IDLE_TIMEOUT, default=30m"`
	SessionMaxAge      time.Duration `env:"SESSION_MAX_AGE, default=12h"`
	// Events is the events service (optional): asked for each app's recent
	// changes and webhook hosts on the connected-apps page, and sent the
	// authorization.revoked events of the outbox (EVENTS_TOKEN).
	Events eventsclient.Config
}

// Validate checks the values and fills derived defaults. Errors name the
// variable to fix.
func (c *Config) Validate() error {
	errs := []error{c.Config.Validate()}
	c.PublicBaseURL = strings.TrimRight(c.PublicBaseURL, "/")
	if u, err := url.Parse(c.PublicBaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, errors.New("PUBLIC_BASE_URL must be an absolute http(s) URL"))
	}
	if c.TokenAudience == "" {
		c.TokenAudience = c.PublicBaseURL + "/v1"
	}
	if c.AdminToken.Reveal() == "" {
		errs = append(errs, errors.New("ADMIN_TOKEN is required"))
	} else if len(c.AdminToken.Reveal()) < 16 {
		errs = append(errs, errors.New("ADMIN_TOKEN must be at least 16 characters"))
	}
	if _, err := c.EncryptionKey(); err != nil {
		errs = append(errs, err)
	}
	c.Events.URL = strings.TrimRight(c.Events.URL, "/")
	if u, err := url.Parse(c.Events.URL); c.Events.URL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		errs = append(errs, errors.New("EVENTS_URL must be an absolute http(s) URL when set"))
	}
	errs = append(errs, c.Events.Validate())
	if c.AccessTokenTTL <= 0 || c.RefreshTokenTTL <= 0 || c.GrantTTL <= 0 {
		errs = append(errs, errors.New("ACCESS_TOKEN_TTL, REFRESH_TOKEN_TTL and GRANT_TTL must be positive durations"))
	}
	if c.SessionIdleTimeout < time.Minute || c.SessionMaxAge < c.SessionIdleTimeout {
		errs = append(errs, errors.New("SESSION_IDLE_TIMEOUT must be at least 1m, and SESSION_MAX_AGE at least SESSION_IDLE_TIMEOUT"))
	}
	return errors.Join(errs...)
}

// EncryptionKey decodes SIGNING_KEY_ENCRYPTION_KEY (32 bytes, base64).
func (c *Config) EncryptionKey() ([]byte, error) {
	v := c.SigningKeyEncryptionKey.Reveal()
	if v == "" {
		return nil, errors.New("SIGNING_KEY_ENCRYPTION_KEY is required (32 bytes, base64)")
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(v); err == nil {
			if len(b) != 32 {
				return nil, fmt.Errorf("SIGNING_KEY_ENCRYPTION_KEY must decode to 32 bytes, got %d", len(b))
			}
			return b, nil
		}
	}
	return nil, errors.New("SIGNING_KEY_ENCRYPTION_KEY is not base64")
}

// Addrs are the public and internal listen addresses.
func (c *Config) Addrs() (string, string) { return c.HTTPAddr, c.InternalHTTPAddr }

// PublicOrigin is the public base URL's scheme and host.
func (c *Config) PublicOrigin() string {
	u, err := url.Parse(c.PublicBaseURL)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// Secure reports whether cookies must be marked Secure.
func (c *Config) Secure() bool { return strings.HasPrefix(c.PublicBaseURL, "https://") }
