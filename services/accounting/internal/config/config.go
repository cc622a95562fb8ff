// Package config is the accounting service's configuration, read once from the
// environment; a bad value stops the process with the variable's name.
package config

import (
	"encoding/base64"
	"errors"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/services/contracts/eventsclient"
)

// Serve is what serve needs (migrate and import need DATABASE_URL only).
type Serve struct {
	HTTPAddr         string `env:"HTTP_ADDR, default=127.0.0.1:8083"`
	InternalHTTPAddr string `env:"INTERNAL_HTTP_ADDR, default=127.0.0.1:9083"`
	service.Config
	CursorKey   config.Secret `env:"CURSOR_KEY, required"`
	IngestToken config.Secret `env:"INGEST_TOKEN, required"`
	Events      eventsclient.Config
}

// Addrs are the public and internal listen addresses.
func (c *Serve) Addrs() (string, string) { return c.HTTPAddr, c.InternalHTTPAddr }

// Validate checks the secrets' shapes.
func (c *Serve) Validate() error {
	if err := c.Config.Validate(); err != nil {
		return err
	}
	if _, err := c.CursorKeyBytes(); err != nil {
		return err
	}
	if len(c.IngestToken.Reveal()) < 16 {
		return errors.New("INGEST_TOKEN must be at least 16 characters")
	}
	return c.Events.Validate()
}

// CursorKeyBytes decodes CURSOR_KEY (base64, at least 32 bytes).
func (c *Serve) CursorKeyBytes() ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(c.CursorKey.Reveal())
	if err != nil {
		if k, err = base64.RawURLEncoding.DecodeString(c.CursorKey.Reveal()); err != nil {
			return nil, errors.New("CURSOR_KEY must be base64")
		}
	}
	if len(k) < 32 {
		return nil, errors.New("CURSOR_KEY must decode to at least 32 bytes")
	}
	return k, nil
}
