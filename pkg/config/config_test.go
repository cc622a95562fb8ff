package config_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/pkg/config"
)

type cfg struct {
	Addr     string        `env:"HTTP_ADDR, default=127.0.0.1:8080"`
	Password config.Secret `env:"ADMIN_TOKEN, required"`
	Timeout  time.Duration `env:"UPSTREAM_TIMEOUT, default=5s"`
	Hour     int           `env:"DAY_START_HOUR, default=4"`
}

func (c *cfg) Validate() error {
	if c.Hour < 0 || c.Hour > 23 {
		return errors.New("DAY_START_HOUR must be between 0 and 23")
	}
	return nil
}

func TestLoad(t *testing.T) {
	var c cfg
	if err := config.LoadMap(context.Background(), &c, map[string]string{"ADMIN_TOKEN": "s3cret"}); err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8080" || c.Timeout != 5*time.Second || c.Password.Reveal() != "s3cret" {
		t.Fatalf("%+v", c)
	}
	for env, wantVar := range map[string]string{"UPSTREAM_TIMEOUT": "UPSTREAM_TIMEOUT", "DAY_START_HOUR": "DAY_START_HOUR"} {
		var c cfg
		err := config.LoadMap(context.Background(), &c, map[string]string{"ADMIN_TOKEN": "x", env: "99x"})
		if err == nil || !strings.Contains(err.Error(), wantVar) {
			t.Errorf("bad %s: %v", env, err)
		}
	}
	var missing cfg
	if err := config.LoadMap(context.Background(), &missing, nil); err == nil || !strings.Contains(err.Error(), "ADMIN_TOKEN") {
		t.Fatalf("missing required: %v", err)
	}
	var out cfg
	if err := config.LoadMap(context.Background(), &out, map[string]string{"ADMIN_TOKEN": "x", "DAY_START_HOUR": "30"}); err == nil || !strings.Contains(err.Error(), "DAY_START_HOUR") {
		t.Fatalf("validate: %v", err)
	}
}

func TestSecretNeverPrints(t *testing.T) {
	c := cfg{Password: "hunter2"}
	js, _ := json.Marshal(c)
	var logged strings.Builder
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "cfg", c, "secret", c.Password)
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), fmt.Sprintf("%v", c.Password), string(js), logged.String()} {
		if strings.Contains(s, "hunter2") {
			t.Fatalf("secret leaked: %s", s)
		}
	}
}

type nested struct {
	DB struct {
		MaxConns int `env:"DATABASE_MAX_OPEN_CONNS, default=5"`
	}
}

func TestNestedVariableIsNamed(t *testing.T) {
	var n nested
	err := config.LoadMap(context.Background(), &n, map[string]string{"DATABASE_MAX_OPEN_CONNS": "many"})
	if err == nil || !strings.HasPrefix(err.Error(), "configuration: DATABASE_MAX_OPEN_CONNS: ") {
		t.Fatalf("%v", err)
	}
}

func TestCheckPrintsTheLoadedConfigWithoutSecrets(t *testing.T) {
	t.Setenv("ADMIN_TOKEN", "s3cret-admin-token")
	t.Setenv("DAY_START_HOUR", "6")
	var out strings.Builder
	if err := config.Check(context.Background(), &cfg{}, &out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "s3cret") {
		t.Fatalf("check printed a secret: %s", out.String())
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out.String()), &got); err != nil {
		t.Fatal(err)
	}
	if got["Addr"] != "127.0.0.1:8080" || got["Hour"] != float64(6) || got["Password"] != "[redacted]" {
		t.Fatalf("check printed %s", out.String())
	}

	t.Setenv("DAY_START_HOUR", "24")
	out.Reset()
	if err := config.Check(context.Background(), &cfg{}, &out); err == nil || !strings.Contains(err.Error(), "DAY_START_HOUR") {
		t.Fatalf("check of an invalid value: %v, want the variable named", err)
	}
	if out.Len() != 0 {
		t.Fatalf("check printed %q for an invalid configuration", out.String())
	}
}
