// Package config loads a process's configuration from the environment into one
// env-tagged struct, validated at start so a bad value stops the process with
// a message naming the variable.
package config

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/sethvargo/go-envconfig"
)

// Validator is implemented by configs with rules beyond parsing. The error
// must name the offending variable.
type Validator interface {
	Validate() error
}

// Load fills cfg (a pointer to a struct with `env` tags) from the process
// environment.
func Load(ctx context.Context, cfg any) error {
	return LoadFrom(ctx, cfg, envconfig.OsLookuper())
}

// CheckCommand is the subcommand every process has that loads its
// configuration as the process does at start, without starting anything.
const CheckCommand = "check-config"

// Check loads cfg from the process environment with the rules the process
// applies at start, then writes the result to w as JSON (secrets print as
// [redacted]): what "<process> check-config" prints, so a deployment's
// environment can be checked before it is rolled out.
func Check(ctx context.Context, cfg any, w io.Writer) error {
	if err := Load(ctx, cfg); err != nil {
		return err
	}
	return json.NewEncoder(w).Encode(cfg)
}

// LoadMap fills cfg from a map, for tests and tools.
func LoadMap(ctx context.Context, cfg any, env map[string]string) error {
	return LoadFrom(ctx, cfg, envconfig.MapLookuper(env))
}

// LoadFrom fills cfg from a lookuper.
func LoadFrom(ctx context.Context, cfg any, l envconfig.Lookuper) error {
	if err := envconfig.ProcessWith(ctx, &envconfig.Config{Target: cfg, Lookuper: l}); err != nil {
		return fmt.Errorf("configuration: %s", nameVariable(reflect.TypeOf(cfg), err.Error()))
	}
	if v, ok := cfg.(Validator); ok {
		if err := v.Validate(); err != nil {
			return fmt.Errorf("configuration: %w", err)
		}
	}
	return nil
}

// Secret holds a credential. It prints as [redacted] in logs, errors and
// JSON, so it can sit in a config struct that is logged.
type Secret string

// String hides the value.
func (Secret) String() string { return "[redacted]" }

// GoString hides the value from %#v.
func (Secret) GoString() string { return "[redacted]" }

// MarshalText hides the value from encoders.
func (Secret) MarshalText() ([]byte, error) { return []byte("[redacted]"), nil }

// Reveal returns the value for the one place that uses it.
func (s Secret) Reveal() string { return string(s) }

// EnvDecode lets envconfig fill a Secret.
func (s *Secret) EnvDecode(v string) error {
	*s = Secret(v)
	return nil
}

// nameVariable rewrites envconfig's "Field: Nested: problem" into
// "VARIABLE: problem", so the message names what the operator sets.
func nameVariable(t reflect.Type, msg string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	rest := msg
	for t.Kind() == reflect.Struct {
		name, tail, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		f, found := t.FieldByName(name)
		if !found {
			break
		}
		rest = tail
		if key, _, _ := strings.Cut(f.Tag.Get("env"), ","); key != "" {
			return key + ": " + rest
		}
		t = f.Type
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
	}
	return msg
}
