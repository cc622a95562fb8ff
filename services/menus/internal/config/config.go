// Package config is the menus service's configuration, read once from the
// environment; a bad value stops the process with the variable's name.
package config

import (
	"errors"

	"partnerapi.dev/pkg/service"
	"partnerapi.dev/services/contracts/eventsclient"
)

// Serve is what serve needs (migrate and import need DATABASE_URL only).
type Serve struct {
	HTTPAddr         string `env:"HTTP_ADDR, default=127.0.0.1:8085"`
	InternalHTTPAddr string `env:"INTERNAL_HTTP_ADDR, default=127.0.0.1:9085"`
	service.Config
	service.Ingest
	Events eventsclient.Config
	// MenuNamingSet is the contract's naming set the deployment serves
	// (A or B); it must match the gateway's.
	MenuNamingSet string `env:"MENU_NAMING_SET, default=A"`
}

// Addrs are the public and internal listen addresses.
func (c *Serve) Addrs() (string, string) { return c.HTTPAddr, c.InternalHTTPAddr }

// Validate checks the secrets' shapes and the naming set.
func (c *Serve) Validate() error {
	if err := service.Validate(&c.Config, &c.Ingest); err != nil {
		return err
	}
	if c.MenuNamingSet != "A" && c.MenuNamingSet != "B" {
		return errors.New("MENU_NAMING_SET must be A or B")
	}
	return c.Events.Validate()
}
