package config

import (
	"context"
	"strings"
	"testing"
	"time"

	pkgconfig "partnerapi.dev/pkg/config"
)

// ctxKeys is one internal-context key (kid:base64 of 32 bytes).
const ctxKeys = "k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="

func TestLoad(t *testing.T) {
	base := map[string]string{
		"DATABASE_URL": "postgres://x@127.0.0.1/db", "ADMIN_TOKEN": "0123456789abcdef0123", "INTERNAL_CONTEXT_KEYS": ctxKeys,
		"SIGNING_KEY_ENCRYPTION_KEY": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
	}
	var c Config
	if err := pkgconfig.LoadMap(context.Background(), &c, base); err != nil {
		t.Fatal(err)
	}
	if c.HTTPAddr != "127.0.0.1:8081" || c.InternalHTTPAddr != "127.0.0.1:9081" || c.PublicBaseURL != "http://127.0.0.1:8080" || c.TokenAudience != "http://127.0.0.1:8080/v1" ||
		c.AccessTokenTTL != 15*time.Minute || c.RefreshTokenTTL != 720*time.Hour || c.GrantTTL != 8760*time.Hour || c.Secure() {
		t.Fatalf("defaults: %+v", c)
	}
	base["PUBLIC_BASE_URL"] = "https://api.example.com/"
	c = Config{}
	if err := pkgconfig.LoadMap(context.Background(), &c, base); err != nil {
		t.Fatal(err)
	}
	if !c.Secure() || c.TokenAudience != "https://api.example.com/v1" {
		t.Fatalf("https: %+v", c)
	}
	for name, env := range map[string]map[string]string{
		"ADMIN_TOKEN":                {"DATABASE_URL": "postgres://x@h/db", "INTERNAL_CONTEXT_KEYS": ctxKeys, "SIGNING_KEY_ENCRYPTION_KEY": base["SIGNING_KEY_ENCRYPTION_KEY"]},
		"SIGNING_KEY_ENCRYPTION_KEY": {"DATABASE_URL": "postgres://x@h/db", "INTERNAL_CONTEXT_KEYS": ctxKeys, "ADMIN_TOKEN": base["ADMIN_TOKEN"], "SIGNING_KEY_ENCRYPTION_KEY": "c2hvcnQ="},
		"INTERNAL_CONTEXT_KEYS":      {"DATABASE_URL": "postgres://x@h/db", "INTERNAL_CONTEXT_KEYS": "nokid", "ADMIN_TOKEN": base["ADMIN_TOKEN"], "SIGNING_KEY_ENCRYPTION_KEY": base["SIGNING_KEY_ENCRYPTION_KEY"]},
		"EVENTS_TOKEN": {"DATABASE_URL": "postgres://x@h/db", "INTERNAL_CONTEXT_KEYS": ctxKeys, "ADMIN_TOKEN": base["ADMIN_TOKEN"], "SIGNING_KEY_ENCRYPTION_KEY": base["SIGNING_KEY_ENCRYPTION_KEY"],
			"EVENTS_URL": "http://events:8080"},
	} {
		c = Config{}
		err := pkgconfig.LoadMap(context.Background(), &c, env)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
		if err != nil && strings.Contains(err.Error(), "0123456789abcdef") {
			t.Errorf("secret leaked: %v", err)
		}
	}
}
