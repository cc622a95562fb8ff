// Package config is the events service's configuration, read once from the
// environment; a bad value stops the process with the variable's name.
package config

import (
	"errors"
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
}

// Validate checks the secrets' shapes.
func (c *Serve) Validate() error {
	if _, err := internalctx.ParseKeys(c.InternalContextKeys.Reveal()); err != nil {
		return errors.New("INTERNAL_CONTEXT_KEYS: " + err.Error())
	}
	if len(c.EventsToken.Reveal()) < 16 {
		return errors.New("EVENTS_TOKEN must be at least 16 characters")
	}
	if c.RetentionInterval < time.Minute {
		return errors.New("EVENTS_RETENTION_INTERVAL must be at least 1m")
	}
	return nil
}
