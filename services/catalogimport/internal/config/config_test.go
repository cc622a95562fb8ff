package config

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	pkgconfig "partnerapi.dev/pkg/config"
	"partnerapi.dev/services/catalogimport/internal/domain"
)

func TestServeConfig(t *testing.T) {
	key := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))
	good := map[string]string{
		"DATABASE_URL": "postgres://x@127.0.0.1/db", "INTERNAL_CONTEXT_KEYS": "k1:" + key,
		"MENUS_URL": "http://127.0.0.1:8085",
	}
	var c Serve
	if err := pkgconfig.LoadMap(context.Background(), &c, good); err != nil {
		t.Fatal(err)
	}
	if c.HTTPAddr != "127.0.0.1:8086" || c.InternalHTTPAddr != "127.0.0.1:9086" {
		t.Fatalf("default addresses %q %q", c.HTTPAddr, c.InternalHTTPAddr)
	}
	if c.Limits.Domain() != domain.ContractLimits || !c.CombosEnabled {
		t.Fatalf("defaults: limits %+v combos %v, want the contract's limits and combos on", c.Limits.Domain(), c.CombosEnabled)
	}
	lowered := map[string]string{"CATALOG_IMPORT_LIMIT_MENU_ITEMS": "10", "CATALOG_IMPORT_COMBOS_ENABLED": "false"}
	for k, v := range good {
		lowered[k] = v
	}
	var low Serve
	if err := pkgconfig.LoadMap(context.Background(), &low, lowered); err != nil || low.Limits.MenuItems != 10 || low.CombosEnabled {
		t.Fatalf("lowered limit: %+v %v", low.Limits, err)
	}
	for variable, value := range map[string]string{
		"INTERNAL_CONTEXT_KEYS":                 "nokid",
		"DATABASE_URL":                          "",
		"MENUS_URL":                             "menus:8080",
		"CATALOG_IMPORT_LIMIT_MENU_ITEMS":       "101",
		"CATALOG_IMPORT_LIMIT_COMBO_COMPONENTS": "-1",
	} {
		env := map[string]string{}
		for k, v := range good {
			env[k] = v
		}
		if value == "" {
			delete(env, variable)
		} else {
			env[variable] = value
		}
		var c Serve
		err := pkgconfig.LoadMap(context.Background(), &c, env)
		if err == nil || !strings.Contains(err.Error(), variable) {
			t.Fatalf("%s=%q: want an error naming it, got %v", variable, value, err)
		}
		if strings.Contains(err.Error(), key) {
			t.Fatal("error leaks a secret")
		}
	}
}
