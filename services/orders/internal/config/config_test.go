package config

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	pkgconfig "partnerapi.dev/pkg/config"
	"partnerapi.dev/services/orders/migrations"
)

func TestServeConfig(t *testing.T) {
	key := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))
	good := map[string]string{
		"DATABASE_URL": "postgres://x@127.0.0.1/db", "INTERNAL_CONTEXT_KEYS": "k1:" + key,
		"CURSOR_KEY": key, "INGEST_TOKEN": "0123456789abcdef",
	}
	var c Serve
	if err := pkgconfig.LoadMap(context.Background(), &c, good); err != nil {
		t.Fatal(err)
	}
	if c.HTTPAddr != "127.0.0.1:8082" || c.InternalHTTPAddr != "127.0.0.1:9082" {
		t.Fatalf("default address %q", c.HTTPAddr)
	}
	for variable, value := range map[string]string{
		"CURSOR_KEY":            base64.StdEncoding.EncodeToString([]byte("short")),
		"INGEST_TOKEN":          "short",
		"INTERNAL_CONTEXT_KEYS": "nokid",
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

// ORDERS_PARTITIONS defaults to the migrations' default and is bounded.
func TestDatabaseConfigPartitions(t *testing.T) {
	env := map[string]string{"DATABASE_URL": "postgres://x@127.0.0.1/db"}
	var c Migrate
	if err := pkgconfig.LoadMap(context.Background(), &c, env); err != nil || c.Partitions != migrations.DefaultPartitions {
		t.Fatalf("default partitions %d (%v), want %d", c.Partitions, err, migrations.DefaultPartitions)
	}
	for _, v := range []string{"0", "-1", "257"} {
		env["ORDERS_PARTITIONS"] = v
		var c Migrate
		if err := pkgconfig.LoadMap(context.Background(), &c, env); err == nil || !strings.Contains(err.Error(), "ORDERS_PARTITIONS") {
			t.Fatalf("ORDERS_PARTITIONS=%s: want an error naming it, got %v", v, err)
		}
	}
}
