package config_test

import (
	"bytes"
	"encoding/base64"
	"testing"
	"time"

	pkgconfig "partnerapi.dev/pkg/config"
	"partnerapi.dev/services/events/internal/config"
)

func TestValidate(t *testing.T) {
	keys := pkgconfig.Secret("k1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32)))
	good := config.Serve{InternalContextKeys: keys, EventsToken: "0123456789abcdef", RetentionInterval: time.Hour}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(*config.Serve){
		"short token":    func(c *config.Serve) { c.EventsToken = "short" },
		"bad keys":       func(c *config.Serve) { c.InternalContextKeys = "nope" },
		"tight interval": func(c *config.Serve) { c.RetentionInterval = time.Second },
	} {
		c := good
		f(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
