// Command postgres-entrypoint is the entrypoint of the local cluster's Postgres image
// (Debian's Postgres binaries), following the official postgres image's contract: on a
// first start (no $PGDATA/PG_VERSION) it runs initdb with superuser POSTGRES_USER and
// password POSTGRES_PASSWORD, accepts password (scram-sha-256) connections from any
// address and creates POSTGRES_DB; then it runs its arguments (default: postgres).
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "postgres-entrypoint:", err)
		os.Exit(1)
	}
}

func run() error {
	user := env("POSTGRES_USER", "postgres")
	db := env("POSTGRES_DB", user)
	data := env("PGDATA", "/var/lib/postgresql/data")
	args := os.Args[1:]
	if len(args) == 0 {
		args = []string{"postgres"}
	}
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if err := initialize(data, user, db, os.Getenv("POSTGRES_PASSWORD")); err != nil {
			return err
		}
	}
	bin, err := exec.LookPath(args[0])
	if err != nil {
		return err
	}
	return syscall.Exec(bin, args, os.Environ()) //nolint:gosec // G702: it runs the container's own command, as an entrypoint does
}

func initialize(data, user, db, password string) error {
	if password == "" {
		return errors.New("POSTGRES_PASSWORD is required")
	}
	if err := os.MkdirAll(data, 0o700); err != nil {
		return err
	}
	pw, err := os.CreateTemp("", "pwfile")
	if err != nil {
		return err
	}
	defer os.Remove(pw.Name())
	if _, err := pw.WriteString(password + "\n"); err != nil {
		return err
	}
	pw.Close()
	if err := cmd("", "initdb", "-D", data, "-U", user, "--pwfile", pw.Name(), "-E", "UTF8", "--locale", "C",
		"--auth-local", "trust", "--auth-host", "scram-sha-256"); err != nil {
		return err
	}
	if err := appendFile(filepath.Join(data, "pg_hba.conf"), "host all all all scram-sha-256\n"); err != nil {
		return err
	}
	if err := appendFile(filepath.Join(data, "postgresql.conf"), "listen_addresses = '*'\n"); err != nil {
		return err
	}
	if db == "postgres" {
		return nil
	}
	return cmd(fmt.Sprintf("CREATE DATABASE %q OWNER %q;\n", db, user), "postgres", "--single", "-D", data, "-j", "postgres")
}

func cmd(stdin, name string, args ...string) error {
	c := exec.Command(name, args...)
	c.Stdout, c.Stderr = os.Stdout, os.Stderr
	if stdin != "" {
		c.Stdin = strings.NewReader(stdin)
	}
	if err := c.Run(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func appendFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func env(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
