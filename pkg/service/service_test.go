package service_test

import (
	"context"
	"strings"
	"testing"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/service"
)

type serve struct {
	HTTPAddr         string `env:"HTTP_ADDR, default=127.0.0.1:8099"`
	InternalHTTPAddr string `env:"INTERNAL_HTTP_ADDR, default=127.0.0.1:9099"`
	service.Config
	Token config.Secret `env:"SOME_TOKEN, required"`
}

func (c *serve) Addrs() (string, string) { return c.HTTPAddr, c.InternalHTTPAddr }

const keys = "k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="

// The shared part is loaded and checked with the service's own: the keys
// are parsed once and handed out, a bad key names its variable and shows
// no secret.
func TestConfigParsesKeysOnce(t *testing.T) {
	env := map[string]string{"DATABASE_URL": "postgres://x@127.0.0.1/db", "INTERNAL_CONTEXT_KEYS": keys, "SOME_TOKEN": "t"}
	var c serve
	if err := config.LoadMap(context.Background(), &c, env); err != nil {
		t.Fatal(err)
	}
	if c.Keys() == nil || c.Database.URL.Reveal() != env["DATABASE_URL"] || c.HTTPAddr != "127.0.0.1:8099" {
		t.Fatalf("loaded %+v", c)
	}
	env["INTERNAL_CONTEXT_KEYS"] = "nokid"
	err := config.LoadMap(context.Background(), &serve{}, env)
	if err == nil || !strings.Contains(err.Error(), "INTERNAL_CONTEXT_KEYS") || strings.Contains(err.Error(), "nokid") {
		t.Fatalf("bad key: %v", err)
	}
	delete(env, "INTERNAL_CONTEXT_KEYS")
	if err := config.LoadMap(context.Background(), &serve{}, env); err == nil || !strings.Contains(err.Error(), "INTERNAL_CONTEXT_KEYS") {
		t.Fatalf("missing key: %v", err)
	}
}

// An unknown command is refused, naming every command the process has.
func TestRunRefusesUnknownCommands(t *testing.T) {
	spec := service.Spec[*serve]{Name: "x", Commands: map[string]service.Command{
		"import": func(context.Context, []string, func(context.Context) (*database.DB, error)) error { return nil },
	}}
	err := service.Run(context.Background(), spec, []string{"publish"})
	if err == nil || err.Error() != `unknown command "publish": use serve, migrate, import or check-config` {
		t.Fatalf("got %v", err)
	}
	ran := false
	spec.Commands["import"] = func(_ context.Context, args []string, _ func(context.Context) (*database.DB, error)) error {
		ran = len(args) == 1 && args[0] == "--file"
		return nil
	}
	if err := service.Run(context.Background(), spec, []string{"import", "--file"}); err != nil || !ran {
		t.Fatalf("import: ran %v, %v", ran, err)
	}
}

type pagingIngest struct {
	service.Paging
	service.Ingest
}

func (c *pagingIngest) Validate() error { return service.Validate(&c.Paging, &c.Ingest) }

// CURSOR_KEY takes padded or URL-safe base64 of 32 bytes or more, and
// INGEST_TOKEN 16 characters or more; each error names its variable and
// shows no secret.
func TestPagingAndIngest(t *testing.T) {
	const token = "0123456789abcdef"
	for _, c := range []struct{ key, token, wantErr string }{
		{"a2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2s=", token, ""},
		{"a2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2s", token, ""},
		{"a2tra2tra2s=", token, "CURSOR_KEY must decode to at least 32 bytes"},
		{"not base64!", token, "CURSOR_KEY must be base64"},
		{"a2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2s=", "short", "INGEST_TOKEN must be at least 16 characters"},
	} {
		var cfg pagingIngest
		err := config.LoadMap(context.Background(), &cfg, map[string]string{"CURSOR_KEY": c.key, "INGEST_TOKEN": c.token})
		if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("CURSOR_KEY=%q INGEST_TOKEN=%q: %v, want %q", c.key, c.token, err, c.wantErr)
		}
		if err != nil && (strings.Contains(err.Error(), c.key) || strings.Contains(err.Error(), c.token)) {
			t.Errorf("the error shows a secret: %v", err)
		}
	}
}
