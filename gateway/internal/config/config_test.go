package config

import (
	"context"
	"strings"
	"testing"

	pkgconfig "partnerapi.dev/pkg/config"
)

func base() map[string]string {
	return map[string]string{
		"REDIS_URL":             "redis://127.0.0.1:6379/0",
		"INTERNAL_CONTEXT_KEYS": "k1:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=",
		"IDENTITY_URL":          "http://127.0.0.1:8081/",
	}
}

func TestDefaults(t *testing.T) {
	var c Config
	if err := pkgconfig.LoadMap(context.Background(), &c, base()); err != nil {
		t.Fatal(err)
	}
	if c.HTTPAddr != "127.0.0.1:8080" || c.InternalHTTPAddr != "127.0.0.1:9080" || c.TokenAudience != "http://127.0.0.1:8080/v1" || c.TokenIssuer != "http://127.0.0.1:8080" ||
		c.RateLimitPerMinute != 60 || c.UnauthRateLimitPerMinute != 300 || c.GrantCacheTTL.String() != "5s" || c.MenuNamingSet != "A" ||
		c.IdentityURL != "http://127.0.0.1:8081" || c.OrdersURL != "" {
		t.Errorf("%+v", c)
	}
}

func TestInvalidValuesNameTheVariable(t *testing.T) {
	for name, v := range map[string]string{
		"MENU_NAMING_SET":       "C",
		"RATE_LIMIT_PER_MINUTE": "0",
		"ORDERS_URL":            "orders:8082",
		"INTERNAL_CONTEXT_KEYS": "short:YWJj",
		"DEPRECATED_OPERATIONS": `{"x":{}}`,
		"PUBLIC_BASE_URL":       "not a url",
	} {
		env := base()
		env[name] = v
		var c Config
		err := pkgconfig.LoadMap(context.Background(), &c, env)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%q: %v", name, v, err)
		}
	}
	env := base()
	delete(env, "IDENTITY_URL")
	var c Config
	if err := pkgconfig.LoadMap(context.Background(), &c, env); err == nil || !strings.Contains(err.Error(), "IDENTITY_URL") {
		t.Errorf("missing IDENTITY_URL: %v", err)
	}
}
