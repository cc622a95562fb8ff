// Package config is the catalog-import service's configuration, read once
// from the environment; a bad value stops the process with the variable's
// name.
package config

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"partnerapi.dev/pkg/service"
	"partnerapi.dev/services/catalogimport/internal/domain"
	"partnerapi.dev/services/contracts/eventsclient"
)

// Serve is what serve needs (migrate needs DATABASE_URL only).
type Serve struct {
	HTTPAddr         string `env:"HTTP_ADDR, default=127.0.0.1:8086"`
	InternalHTTPAddr string `env:"INTERNAL_HTTP_ADDR, default=127.0.0.1:9086"`
	service.Config
	// MenusURL is the menus service's base URL: the catalog is read and
	// written only through its internal catalog API.
	MenusURL string `env:"MENUS_URL, required"`
	// MenusTimeout bounds one call to the menus service.
	MenusTimeout time.Duration `env:"MENUS_TIMEOUT, default=15s"`
	// CombosEnabled: combos in a document are planned and written; when
	// false they are a plan error.
	CombosEnabled bool `env:"CATALOG_IMPORT_COMBOS_ENABLED, default=true"`
	Limits        Limits
	// MenuNamingSet is the contract's naming set the deployment serves (A
	// or B); it must match the gateway's and the menus service's.
	MenuNamingSet string `env:"MENU_NAMING_SET, default=A"`
	Events        eventsclient.Config
}

// Addrs are the public and internal listen addresses.
func (c *Serve) Addrs() (string, string) { return c.HTTPAddr, c.InternalHTTPAddr }

// Limits are the per-document limits the capabilities announce and the plan
// enforces; each may be lowered below the contract's value, never raised.
type Limits struct {
	MenuCategories    int `env:"CATALOG_IMPORT_LIMIT_MENU_CATEGORIES, default=20"`
	MenuItems         int `env:"CATALOG_IMPORT_LIMIT_MENU_ITEMS, default=100"`
	OptionGroups      int `env:"CATALOG_IMPORT_LIMIT_OPTION_GROUPS, default=20"`
	Options           int `env:"CATALOG_IMPORT_LIMIT_OPTIONS, default=100"`
	ProductCategories int `env:"CATALOG_IMPORT_LIMIT_PRODUCT_CATEGORIES, default=20"`
	Products          int `env:"CATALOG_IMPORT_LIMIT_PRODUCTS, default=100"`
	Combos            int `env:"CATALOG_IMPORT_LIMIT_COMBOS, default=20"`
	ComboComponents   int `env:"CATALOG_IMPORT_LIMIT_COMBO_COMPONENTS, default=100"`
}

// Domain returns the limits as the domain counts them.
func (l Limits) Domain() domain.Limits {
	return domain.Limits{
		MenuCategories: l.MenuCategories, MenuItems: l.MenuItems, OptionGroups: l.OptionGroups,
		Options: l.Options, ProductCategories: l.ProductCategories, Products: l.Products,
		Combos: l.Combos, ComboComponents: l.ComboComponents,
	}
}

// Validate checks the secrets' shapes, the menus URL and the limits.
func (c *Serve) Validate() error {
	if err := c.Config.Validate(); err != nil {
		return err
	}
	if u, err := url.Parse(c.MenusURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("MENUS_URL must be an http or https URL such as http://127.0.0.1:8085")
	}
	if c.MenuNamingSet != "A" && c.MenuNamingSet != "B" {
		return errors.New("MENU_NAMING_SET must be A or B")
	}
	if c.MenusTimeout <= 0 {
		return errors.New("MENUS_TIMEOUT must be positive")
	}
	got, max := c.Limits.Domain(), domain.ContractLimits
	for _, l := range []struct {
		env      string
		got, max int
	}{
		{"CATALOG_IMPORT_LIMIT_MENU_CATEGORIES", got.MenuCategories, max.MenuCategories},
		{"CATALOG_IMPORT_LIMIT_MENU_ITEMS", got.MenuItems, max.MenuItems},
		{"CATALOG_IMPORT_LIMIT_OPTION_GROUPS", got.OptionGroups, max.OptionGroups},
		{"CATALOG_IMPORT_LIMIT_OPTIONS", got.Options, max.Options},
		{"CATALOG_IMPORT_LIMIT_PRODUCT_CATEGORIES", got.ProductCategories, max.ProductCategories},
		{"CATALOG_IMPORT_LIMIT_PRODUCTS", got.Products, max.Products},
		{"CATALOG_IMPORT_LIMIT_COMBOS", got.Combos, max.Combos},
		{"CATALOG_IMPORT_LIMIT_COMBO_COMPONENTS", got.ComboComponents, max.ComboComponents},
	} {
		if l.got < 0 || l.got > l.max {
			return fmt.Errorf("%s must be between 0 and %d (the contract's limit), got %d", l.env, l.max, l.got)
		}
	}
	return c.Events.Validate()
}
