// Package config is the orders service's configuration, read once from the
// environment; a bad value stops the process with the variable's name.
package config

import (
	"fmt"

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
	service.Paging
	service.Ingest
	Events eventsclient.Config
}

// Addrs are the public and internal listen addresses.
func (c *Serve) Addrs() (string, string) { return c.HTTPAddr, c.InternalHTTPAddr }

// Validate checks the keys' and secrets' shapes.
func (c *Serve) Validate() error {
	return service.Validate(&c.Config, &c.Paging, &c.Ingest, &c.Events)
}
