package config

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	pkgconfig "partnerapi.dev/pkg/config"
)

func TestServeConfig(t *testing.T) {
	key := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))
	good := map[string]string{
		"DATABASE_URL": "postgres://x@127.0.0.1/db", "INTERNAL_CONTEXT_KEYS": "k1:" + key, "INGEST_TOKEN": "0123456789abcdef",
	}
	var c Serve
	if err := pkgconfig.LoadMap(context.Background(), &c, good); err != nil {
		t.Fatal(err)
	}
	if c.HTTPAddr != "127.0.0.1:8085" || c.InternalHTTPAddr != "127.0.0.1:9085" || c.MenuNamingSet != "A" {
		t.Fatalf("defaults %+v", c)
	}
	for variable, value := range map[string]string{
		"INGEST_TOKEN":          "short",
		"INTERNAL_CONTEXT_KEYS": "nokid",
		"MENU_NAMING_SET":       "C",
		"DATABASE_URL":          "",
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
