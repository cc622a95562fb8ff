// Package service runs a service process the one way every service does: the
// serve, migrate and check-config commands and the service's own, the
// configuration every service shares, telemetry, the database, the public and
// internal listeners and the ordered shutdown. A service's main states only
// what is particular to it, in a Spec.
package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/pressly/goose/v3"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/lifecycle"
	"partnerapi.dev/pkg/telemetry"
)

// Config is the part of the serve configuration every service has; each
// service's serve configuration embeds it.
type Config struct {
	Database            database.Config
	InternalContextKeys config.Secret `env:"INTERNAL_CONTEXT_KEYS, required"`

	keys *internalctx.Keyring
}

// Validate parses the internal-context keys once; Keys returns them. A
// service whose configuration has rules of its own calls it first.
func (c *Config) Validate() error {
	keys, err := internalctx.ParseKeys(c.InternalContextKeys.Reveal())
	if err != nil {
		return errors.New("INTERNAL_CONTEXT_KEYS: " + err.Error())
	}
	c.keys = keys
	return nil
}

// Keys is the internal-context key ring Validate parsed: the first key signs,
// every key verifies.
func (c *Config) Keys() *internalctx.Keyring { return c.keys }

// Base is the shared part, reached through the service's configuration.
func (c *Config) Base() *Config { return c }

// Serving is a service's serve configuration: it embeds Config and says
// where the two listeners answer (HTTP_ADDR, INTERNAL_HTTP_ADDR, with the
// service's own defaults).
type Serving interface {
	config.Validator
	Base() *Config
	Addrs() (public, internal string)
}

// Server is a service assembled on its open database: what serve answers
// with, and what the service's tests call.
type Server struct {
	// Public answers partner operations and internal APIs on HTTP_ADDR.
	Public *fiber.App
	// Internal answers /metrics and probes on INTERNAL_HTTP_ADDR.
	Internal *fiber.App
	// Closers stop what the server started, in order; the database and
	// telemetry close after them.
	Closers []lifecycle.Closer
}

// Ready is the readiness check of a service whose one dependency is its
// database.
func Ready(db *database.DB) []httpx.Check {
	return []httpx.Check{{Name: "database", Fn: db.Ping}}
}

// Process is what serve opens for a service before building it.
type Process struct {
	DB *database.DB
	// Reads sends reads outside writes to DATABASE_READ_URL's replica (to
	// the primary when it is unset); opened when the spec asks for it.
	Reads *database.Reads
	// Metrics is what the internal listener serves at /metrics.
	Metrics http.Handler
	// Now is the service's clock: nil in serve (the wall clock); tests set
	// one they move.
	Now func() time.Time
}

// Command is one of a service's own subcommands (an import, say); open
// opens the service's database with its migrations applied.
type Command func(ctx context.Context, args []string, open func(context.Context) (*database.DB, error)) error

// Spec is what a service states about itself; C is its serve configuration.
type Spec[C Serving] struct {
	// Name is the process's name, its telemetry service name and its schema.
	Name string
	// Migrations are the schema's goose files, GoMigrations its Go steps
	// (a function: a step may take a setting, such as orders' partition
	// count, loaded when migrating; Steps wraps a fixed list).
	Migrations   fs.FS
	GoMigrations func(ctx context.Context) ([]*goose.Migration, error)
	// AfterMigrate, when set, is migrate's data step, run once the schema
	// is migrated.
	AfterMigrate func(ctx context.Context, db *database.DB) error
	// Reads: the service reads from a replica when DATABASE_READ_URL names one.
	Reads bool
	// Build assembles the service on what serve opened.
	Build func(ctx context.Context, cfg C, p Process) (*Server, error)
	// Commands are the service's own subcommands by name.
	Commands map[string]Command
}

// Steps is a fixed list of Go migration steps, for Spec.GoMigrations.
func Steps(steps ...*goose.Migration) func(context.Context) ([]*goose.Migration, error) {
	return func(context.Context) ([]*goose.Migration, error) { return steps, nil }
}

// Main runs the process: "serve" (the default), "migrate", "check-config"
// and the spec's own commands.
func Main[T any, C interface {
	*T
	Serving
}](spec Spec[C]) {
	lifecycle.Main(func(ctx context.Context, args []string) error { return Run(ctx, spec, args) })
}

// Run dispatches one command line.
func Run[T any, C interface {
	*T
	Serving
}](ctx context.Context, spec Spec[C], args []string) error {
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		cfg := C(new(T))
		if err := config.Load(ctx, cfg); err != nil {
			return err
		}
		return spec.serve(ctx, cfg)
	case config.CheckCommand:
		return config.Check(ctx, C(new(T)), os.Stdout)
	case "migrate":
		db, applied, err := spec.migrated(ctx)
		if err != nil {
			return err
		}
		slog.Info(spec.Name+" schema migrated", "applied", applied)
		return db.Close(ctx)
	}
	if run, ok := spec.Commands[cmd]; ok {
		return run(ctx, args, func(ctx context.Context) (*database.DB, error) {
			db, _, err := spec.migrated(ctx)
			return db, err
		})
	}
	names := []string{"serve", "migrate"}
	for name := range spec.Commands {
		names = append(names, name)
	}
	slices.Sort(names[2:])
	return fmt.Errorf("unknown command %q: use %s or %s", cmd, strings.Join(names, ", "), config.CheckCommand)
}

// migrated opens the database of DATABASE_URL and migrates the schema,
// returning how many migrations it applied: what migrate does, and what an
// import starts with. Migrating is idempotent and safe from several
// replicas at once.
func (s Spec[C]) migrated(ctx context.Context) (*database.DB, int, error) {
	var cfg migrateConfig
	if err := config.Load(ctx, &cfg); err != nil {
		return nil, 0, err
	}
	var steps []*goose.Migration
	if s.GoMigrations != nil {
		var err error
		if steps, err = s.GoMigrations(ctx); err != nil {
			return nil, 0, err
		}
	}
	db, err := database.Open(ctx, cfg.Database, s.Name)
	if err != nil {
		return nil, 0, err
	}
	if err := awaitDatabase(ctx, db, cfg.Wait); err != nil {
		_ = db.Close(ctx)
		return nil, 0, err
	}
	res, err := db.Migrate(ctx, s.Migrations, steps...)
	if err == nil && s.AfterMigrate != nil {
		err = s.AfterMigrate(ctx, db)
	}
	if err != nil {
		_ = db.Close(ctx)
		return nil, 0, err
	}
	return db, len(res), nil
}

// migrateConfig is what migrate and a service's own commands read.
type migrateConfig struct {
	Database database.Config
	// Wait bounds how long migrating waits for the database to answer.
	Wait time.Duration `env:"MIGRATE_WAIT, default=2m"`
}

// awaitDatabase pings db once a second until it answers or wait has passed. A
// migrate init container may start beside a database that is still starting,
// or before a NetworkPolicy agent lets its new pod's packets through: that is
// waited out, where failing would have the kubelet restart it with a growing
// back-off (and skaffold call the deploy failed).
func awaitDatabase(ctx context.Context, db *database.DB, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for first := true; ; first = false {
		err := db.Ping(ctx)
		if err == nil {
			if !first {
				slog.Info("the database answers")
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the database did not answer within MIGRATE_WAIT (%s): %w", wait, err)
		}
		if first {
			slog.Info("waiting for the database to answer", "wait", wait.String(), "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// serve starts telemetry, opens the database (and its replica), builds the service and
// answers on both listeners until ctx ends; then the server's closers, the
// database and telemetry close in that order.
func (s Spec[C]) serve(ctx context.Context, cfg C) error {
	tel, err := telemetry.Setup(ctx, s.Name, telemetry.Options{})
	if err != nil {
		return err
	}
	closers := []lifecycle.Closer{{Name: "telemetry", Fn: tel.Shutdown}}
	db, err := database.Open(ctx, cfg.Base().Database, s.Name)
	if err != nil {
		_ = lifecycle.Close(ctx, closers...)
		return err
	}
	closers = append([]lifecycle.Closer{{Name: "database", Fn: db.Close}}, closers...)
	p := Process{DB: db, Metrics: tel.Handler()}
	if s.Reads {
		if p.Reads, err = database.OpenReads(ctx, cfg.Base().Database, s.Name, db); err != nil {
			_ = lifecycle.Close(ctx, closers...)
			return err
		}
		closers = append([]lifecycle.Closer{{Name: "database replica", Fn: p.Reads.Close}}, closers...)
	}
	srv, err := s.Build(ctx, cfg, p)
	if err != nil {
		_ = lifecycle.Close(ctx, closers...)
		return err
	}
	public, internal := cfg.Addrs()
	return lifecycle.Serve(ctx, []lifecycle.Listener{{App: srv.Public, Addr: public}, {App: srv.Internal, Addr: internal}},
		append(srv.Closers, closers...)...)
}

// Input is what an import reads: the file at path, or standard input when
// path is "" or "-". The caller closes it.
func Input(path string) (io.ReadCloser, error) {
	if path == "" || path == "-" {
		return io.NopCloser(os.Stdin), nil
	}
	return os.Open(path)
}
