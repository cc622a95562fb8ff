// Package testenv gives tests a real Postgres and a real Redis: the servers in
// TEST_DATABASE_URL / TEST_REDIS_URL when set, otherwise throwaway servers
// started from the installed binaries for the test binary's lifetime. Each
// test gets its own database cloned from a template migrated once per package.
package testenv

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"

	"partnerapi.dev/pkg/localinfra"
)

var (
	mu        sync.Mutex
	servers   []*localinfra.Server
	tempDirs  []string
	pgURL     string
	redisURL  string
	templates = map[string]string{}
	cleanups  []func()
)

// Main runs the package's tests and stops what testenv started. Call it from
// TestMain: func TestMain(m *testing.M) { testenv.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	mu.Lock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	for _, s := range servers {
		_ = s.Stop()
	}
	for _, d := range tempDirs {
		_ = os.RemoveAll(d)
	}
	mu.Unlock()
	os.Exit(code)
}

// PostgresURL returns the admin URL of the test server (database "postgres").
func PostgresURL(t testing.TB) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if pgURL != "" {
		return pgURL
	}
	if v := os.Getenv("TEST_DATABASE_URL"); v != "" {
		pgURL = v
		return pgURL
	}
	dir, err := os.MkdirTemp("", "partnerapi-pg-")
	if err != nil {
		t.Fatal(err)
	}
	tempDirs = append(tempDirs, dir)
	s, err := localinfra.StartPostgres(context.Background(), localinfra.PostgresOptions{Dir: dir})
	if err != nil {
		t.Fatalf("start test postgres: %v", err)
	}
	servers = append(servers, s)
	pgURL = s.URL
	return pgURL
}

// RedisURL returns the URL of the test Redis.
func RedisURL(t testing.TB) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if redisURL != "" {
		return redisURL
	}
	if v := os.Getenv("TEST_REDIS_URL"); v != "" {
		redisURL = v
		return redisURL
	}
	dir, err := os.MkdirTemp("", "partnerapi-redis-")
	if err != nil {
		t.Fatal(err)
	}
	tempDirs = append(tempDirs, dir)
	s, err := localinfra.StartRedis(context.Background(), localinfra.RedisOptions{Dir: dir})
	if err != nil {
		t.Fatalf("start test redis: %v", err)
	}
	servers = append(servers, s)
	redisURL = s.URL
	return redisURL
}

// MigrateFunc migrates the database at url.
type MigrateFunc func(ctx context.Context, url string) error

// NewDatabase returns the URL of a fresh database for this test, a clone of
// a template that migrate ran on once for the package (per name). The
// database is dropped when the test ends.
func NewDatabase(t testing.TB, name string, migrate MigrateFunc) string {
	t.Helper()
	admin := PostgresURL(t)
	tpl := template(t, admin, name, migrate)
	db := "t_" + randomHex(8)
	exec(t, admin, fmt.Sprintf(`CREATE DATABASE %s TEMPLATE %s`, db, tpl))
	t.Cleanup(func() { _ = execErr(admin, fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, db)) })
	return withDatabase(admin, db)
}

func template(t testing.TB, admin, name string, migrate MigrateFunc) string {
	mu.Lock()
	defer mu.Unlock()
	if tpl, ok := templates[name]; ok {
		return tpl
	}
	tpl := "tpl_" + randomHex(8)
	if err := execErr(admin, fmt.Sprintf(`CREATE DATABASE %s`, tpl)); err != nil {
		t.Fatalf("create template database: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := migrate(ctx, withDatabase(admin, tpl)); err != nil {
		t.Fatalf("migrate template database: %v", err)
	}
	// Cloning needs the template to have no open sessions.
	if err := execErr(admin, fmt.Sprintf(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '%s' AND pid <> pg_backend_pid()`, tpl)); err != nil {
		t.Fatal(err)
	}
	templates[name] = tpl
	cleanups = append(cleanups, func() { _ = execErr(admin, fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, tpl)) })
	return tpl
}

func withDatabase(admin, db string) string {
	u, err := url.Parse(admin)
	if err != nil {
		panic(err)
	}
	u.Path = "/" + db
	return u.String()
}

func exec(t testing.TB, dsn, stmt string) {
	t.Helper()
	if err := execErr(dsn, stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

func execErr(dsn, stmt string) error {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var lastErr error
	for range 5 { // CREATE DATABASE ... TEMPLATE races with a sibling's clone.
		if _, lastErr = db.ExecContext(ctx, stmt); lastErr == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return lastErr
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// RedisCluster starts a Redis Cluster of three masters, each with one
// replica, for this test (stopped when it ends): a killed master's replica
// takes over in about two seconds.
func RedisCluster(t testing.TB) *localinfra.RedisTopology {
	t.Helper()
	c, err := localinfra.StartRedisCluster(context.Background(), t.TempDir(), 3, time.Second)
	if err != nil {
		t.Fatalf("start a redis cluster: %v", err)
	}
	t.Cleanup(c.Stop)
	return c
}

// RedisSentinel starts a Redis primary with one replica and three sentinels
// for this test (stopped when it ends): a killed primary is replaced in a
// few seconds.
func RedisSentinel(t testing.TB) *localinfra.RedisTopology {
	t.Helper()
	s, err := localinfra.StartRedisSentinel(context.Background(), t.TempDir(), "partnerapi", time.Second)
	if err != nil {
		t.Fatalf("start a redis sentinel set: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// PostgresWithReplica starts a Postgres server of this test's own and a
// streaming replica of it (stopped when the test ends) and returns their
// URLs; the replica's replay can be paused with pg_wal_replay_pause().
func PostgresWithReplica(t testing.TB) (primary, replica string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	p, err := localinfra.StartPostgres(ctx, localinfra.PostgresOptions{Dir: filepath.Join(dir, "primary")})
	if err != nil {
		t.Fatalf("start a primary: %v", err)
	}
	t.Cleanup(func() { _ = p.Stop() })
	r, err := localinfra.StartPostgresReplica(ctx, p.URL, filepath.Join(dir, "replica"))
	if err != nil {
		t.Fatalf("start a replica: %v", err)
	}
	t.Cleanup(func() { _ = r.Stop() })
	return p.URL, r.URL
}
