// Package config is the orders service's configuration, read once from the
// environment; a bad value stops the process with the variable's name.
package config

import (
	"encoding/base64"
	"errors"
	"fmt"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/services/contracts/eventsclient"
	"partnerapi.dev/services/orders/migrations"
)

// Migrate is what migrating needs besides DATABASE_URL.
type Migrate struct {
	// Partitions is how many hash partitions by restaurant the order
	// tables get when the migration that partitions them runs; a schema
	// already partitioned keeps its count.
	Partitions int `env:"ORDERS_PARTITIONS, default=16"`
}

// Validate checks the partition count.
func (c *Migrate) Validate() error {
	if c.Partitions < 1 || c.Partitions > migrations.MaxPartitions {
		return fmt.Errorf("ORDERS_PARTITIONS must be between 1 and %d", migrations.MaxPartitions)
	}
	return nil
}

// Serve is what serve needs (migrate and import need DATABASE_URL and Migrate).
type Serve struct {
	HTTPAddr         string `env:"HTTP_ADDR, default=127.0.0.1:8082"`
	InternalHTTPAddr string `env:"INTERNAL_HTTP_ADDR, default=127.0.0.1:9082"`
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
