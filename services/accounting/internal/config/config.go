// Package config is the accounting service's configuration, read once from the
// environment; a bad value stops the process with the variable's name.
package config

import (
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/services/contracts/eventsclient"
)

// Serve is what serve needs (migrate and import need DATABASE_URL only).
type Serve struct {
	HTTPAddr         string `env:"HTTP_ADDR, default=127.0.0.1:8083"`
	InternalHTTPAddr string `env:"INTERNAL_HTTP_ADDR, default=127.0.0.1:9083"`
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
