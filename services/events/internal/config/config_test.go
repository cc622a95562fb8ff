package config_test

import (
	"bytes"
	"encoding/base64"
	"testing"
	"time"

	pkgconfig "partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/services/events/internal/config"
)

func TestValidate(t *testing.T) {
	keys := pkgconfig.Secret("k1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32)))
	good := config.Serve{Config: service.Config{InternalContextKeys: keys}, WebhookSecretKeys: config.WebhookSecretKeys{Keys: keys}, EventsToken: "0123456789abcdef", RetentionInterval: time.Hour,
		IdentityURL: "http://127.0.0.1:8081/", WebhookParallel: 16, WebhookPerEndpoint: 4, MenuNamingSet: "A", WebhookGrantCacheTTL: 5 * time.Second}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	if good.IdentityURL != "http://127.0.0.1:8081" {
		t.Fatalf("IDENTITY_URL kept its trailing slash: %q", good.IdentityURL)
	}
	for name, f := range map[string]func(*config.Serve){
		"short token":                 func(c *config.Serve) { c.EventsToken = "short" },
		"bad keys":                    func(c *config.Serve) { c.InternalContextKeys = "nope" },
		"tight interval":              func(c *config.Serve) { c.RetentionInterval = time.Second },
		"no identity":                 func(c *config.Serve) { c.IdentityURL = "" },
		"identity path":               func(c *config.Serve) { c.IdentityURL = "identity:8081" },
		"no parallel":                 func(c *config.Serve) { c.WebhookParallel = 0 },
		"long grant ttl":              func(c *config.Serve) { c.WebhookGrantCacheTTL = time.Hour },
		"no webhook secret keys":      func(c *config.Serve) { c.WebhookSecretKeys.Keys = "" },
		"short webhook secret key":    func(c *config.Serve) { c.WebhookSecretKeys.Keys = "k1:AAAA" },
		"naming set C":                func(c *config.Serve) { c.MenuNamingSet = "C" },
		"no per endpoint":             func(c *config.Serve) { c.WebhookPerEndpoint = 0 },
		"per endpoint above parallel": func(c *config.Serve) { c.WebhookPerEndpoint = 17 },
	} {
		c := good
		f(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
