// Package database opens a service's Postgres schema through gorm on pgx and
// migrates it with goose from embedded SQL files.
package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"net"
	"regexp"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/multitracer"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"
	"github.com/pressly/goose/v3/lock"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/fault"
)

// Config is the database part of a service's configuration.
type Config struct {
	URL          config.Secret `env:"DATABASE_URL, required"`
	MaxOpenConns int           `env:"DATABASE_MAX_OPEN_CONNS, default=20"`
	// MaxIdleConns below MaxOpenConns makes a busy service close and reopen
	// connections all the time (each one a new Postgres backend process);
	// idle connections are closed after ConnMaxIdleTime instead.
	MaxIdleConns    int           `env:"DATABASE_MAX_IDLE_CONNS, default=20"`
	ConnMaxIdleTime time.Duration `env:"DATABASE_CONN_MAX_IDLE_TIME, default=5m"`
	ConnMaxLifetime time.Duration `env:"DATABASE_CONN_MAX_LIFETIME, default=30m"`
	// Bounds that make a hung database (a partition, a frozen host: the
	// kernel accepts the connection, nothing answers, so no server-side
	// timeout ever fires) answer 503 in under a second instead of at the
	// caller's timeout. Zero turns a bound off (tests' literal Configs).
	//
	// ConnectTimeout bounds opening a connection (TCP and startup).
	ConnectTimeout time.Duration `env:"DATABASE_CONNECT_TIMEOUT, default=700ms"`
	// StatementTimeout bounds each statement on the client side, from
	// sending it to reading its last row, unless the context is Unbounded
	// (imports, migrations).
	StatementTimeout time.Duration `env:"DATABASE_STATEMENT_TIMEOUT, default=800ms"`
	// IdleInTransactionTimeout is Postgres's
	// idle_in_transaction_session_timeout: a transaction whose client
	// vanished mid-way releases its locks after it.
	IdleInTransactionTimeout time.Duration `env:"DATABASE_IDLE_IN_TRANSACTION_TIMEOUT, default=30s"`
	// ReadURL is an optional streaming replica of the same database for the
	// services' heavy reads (OpenReads); empty reads from the primary.
	ReadURL config.Secret `env:"DATABASE_READ_URL"`
	// ReadWait bounds how long a read waits for the replica to replay what
	// the primary had committed when the read began, before it reads from
	// the primary instead.
	ReadWait time.Duration `env:"DATABASE_READ_WAIT, default=50ms"`
}

var validSchema = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// DB is an open connection pool bound to one schema.
type DB struct {
	Gorm   *gorm.DB
	SQL    *sql.DB
	Schema string

	breaker *breaker
	timeout time.Duration
}

// Open connects to the database with search_path set to schema, so every
// unqualified name in the service's SQL is its own.
func Open(ctx context.Context, cfg Config, schema string) (*DB, error) {
	if !validSchema.MatchString(schema) {
		return nil, fmt.Errorf("invalid schema name %q", schema)
	}
	pcfg, err := pgx.ParseConfig(cfg.URL.Reveal())
	if err != nil {
		return nil, errors.New("DATABASE_URL is not a valid Postgres URL")
	}
	pcfg.RuntimeParams["search_path"] = schema
	if pcfg.RuntimeParams["application_name"] == "" {
		pcfg.RuntimeParams["application_name"] = schema
	}
	if cfg.IdleInTransactionTimeout > 0 {
		pcfg.RuntimeParams["idle_in_transaction_session_timeout"] = strconv.FormatInt(cfg.IdleInTransactionTimeout.Milliseconds(), 10)
	}
	if cfg.ConnectTimeout > 0 {
		pcfg.ConnectTimeout = cfg.ConnectTimeout
	}
	pcfg.DialFunc = dialer(pcfg.ConnectTimeout).DialContext
	b := &breaker{done: make(chan struct{})}
	pcfg.Tracer = multitracer.New(&statementBound{timeout: cfg.StatementTimeout, breaker: b}, newQueryTracer())
	sqlDB := sql.OpenDB(gatedConnector{Connector: stdlib.GetConnector(*pcfg, stdlib.OptionShouldPing(b.pingIdle)), breaker: b})
	b.probe = func(ctx context.Context) error { return sqlDB.PingContext(ctx) }
	b.probeTimeout = max(cfg.StatementTimeout, cfg.ConnectTimeout)
	sqlDB.SetMaxOpenConns(orDefault(cfg.MaxOpenConns, 20))
	sqlDB.SetMaxIdleConns(orDefault(cfg.MaxIdleConns, 20))
	sqlDB.SetConnMaxIdleTime(cfg.ConnMaxIdleTime)
	sqlDB.SetConnMaxLifetime(cfg.ConnMaxLifetime)
	gdb, err := gorm.Open(postgres.New(postgres.Config{Conn: sqlDB}), &gorm.Config{
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true,
		PrepareStmt:            false,
		TranslateError:         true,
		// A service starts while its database is down and reports not ready.
		DisableAutomaticPing: true,
	})
	if err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("open gorm: %w", err)
	}
	return &DB{Gorm: gdb, SQL: sqlDB, Schema: schema, breaker: b, timeout: b.probeTimeout}, nil
}

func orDefault(v, d int) int {
	if v <= 0 {
		return d
	}
	return v
}

// Ping is the readiness check: not ready while the breaker skips the
// database, and a hung database fails it within the database's bounds.
func (db *DB) Ping(ctx context.Context) error {
	if db.breaker.isOpen() {
		return ErrUnavailable
	}
	if db.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, db.timeout)
		defer cancel()
	}
	return db.SQL.PingContext(ctx)
}

// Close closes the pool.
func (db *DB) Close(context.Context) error {
	db.breaker.stop()
	return db.SQL.Close()
}

// Migrate creates the schema if needed and applies the embedded migrations
// (numbered .sql files at the root of migrations) plus any Go migrations, with
// the version table inside the schema and a per-schema advisory lock, so
// several replicas starting at once migrate exactly once.
func (db *DB) Migrate(ctx context.Context, migrations fs.FS, goMigrations ...*goose.Migration) ([]*goose.MigrationResult, error) {
	// A migration (an index on a large table) may take minutes.
	ctx = Unbounded(ctx)
	if _, err := db.SQL.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS `+db.Schema); err != nil {
		return nil, fmt.Errorf("create schema %s: %w", db.Schema, err)
	}
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(LockID(db.Schema)))
	if err != nil {
		return nil, err
	}
	store, err := database.NewStore(database.DialectPostgres, db.Schema+".goose_db_version")
	if err != nil {
		return nil, err
	}
	p, err := goose.NewProvider("", db.SQL, migrations,
		goose.WithStore(store),
		goose.WithSessionLocker(locker),
		goose.WithGoMigrations(goMigrations...),
	)
	if err != nil {
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	res, err := p.Up(ctx)
	if err != nil {
		return res, fmt.Errorf("migrate %s: %w", db.Schema, err)
	}
	return res, nil
}

// MigrateURL returns a function that applies migrations to schema in the
// database at a URL, as a service's migrate subcommand does; tests hand it to
// testenv.NewDatabase.
func MigrateURL(schema string, migrations fs.FS, goMigrations ...*goose.Migration) func(ctx context.Context, url string) error {
	return func(ctx context.Context, url string) error {
		db, err := Open(ctx, Config{URL: config.Secret(url)}, schema)
		if err != nil {
			return err
		}
		defer db.Close(ctx)
		_, err = db.Migrate(ctx, migrations, goMigrations...)
		return err
	}
}

// LockID is the advisory lock id guarding a schema's migrations.
func LockID(schema string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("partnerapi.migrate." + schema))
	return int64(h.Sum64() & 0x7fffffffffffffff)
}

// Outcomes of the database that callers answer alike in every service.
var (
	errUnavailable = fault.New(fault.Unavailable, "the database is unavailable")
	errConflict    = fault.New(fault.Conflict, "A concurrent change won; retry.")
)

// Every binary that opens a database answers its outages and lost races
// through the common error kinds, with no mapping of its own.
func init() { fault.RegisterClassifier(Classify) }

// Classify gives a database error its kind: unavailable for an outage or a
// query ended by its context (the caller went away or timed out), conflict
// for a lost race (IsConflict); nil for any other error.
func Classify(err error) fault.Kinded {
	switch {
	case IsUnavailable(err), errors.Is(err, context.Canceled):
		return errUnavailable
	case IsConflict(err):
		return errConflict
	}
	return nil
}

// IsUnavailable reports whether err means the database could not be reached
// (connection refused or lost, server shutting down, timeout), which callers
// answer with 503 rather than 500.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case len(pe.Code) == 5 && (pe.Code[:2] == "08" || pe.Code[:2] == "53" || pe.Code[:2] == "57"):
			return true
		}
	}
	return pgconn.Timeout(err)
}

// IsConflict reports whether err is a serialization failure, deadlock or
// unique violation: a concurrent writer won, answered 409.
func IsConflict(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "40001" || pe.Code == "40P01" || pe.Code == "23505" || pe.Code == "55P03"
	}
	return errors.Is(err, gorm.ErrDuplicatedKey)
}
