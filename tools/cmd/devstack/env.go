package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"

	"partnerapi.dev/pkg/localinfra"
)

// withTestInfra runs a command (the test suite) against real Postgres and
// Redis: those in TEST_DATABASE_URL / TEST_REDIS_URL, or throwaway servers.
func withTestInfra(ctx context.Context, command []string) error {
	tmp, err := os.MkdirTemp("", "partnerapi-test-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	env := os.Environ()
	if os.Getenv("TEST_DATABASE_URL") == "" {
		pg, err := localinfra.StartPostgres(ctx, localinfra.PostgresOptions{Dir: filepath.Join(tmp, "postgres")})
		if err != nil {
			return err
		}
		defer func() { _ = pg.Stop() }()
		env = append(env, "TEST_DATABASE_URL="+pg.URL)
		logf("test postgres at %s", pg.URL)
	}
	if os.Getenv("TEST_REDIS_URL") == "" {
		rd, err := localinfra.StartRedis(ctx, localinfra.RedisOptions{Dir: filepath.Join(tmp, "redis")})
		if err != nil {
			return err
		}
		defer func() { _ = rd.Stop() }()
		env = append(env, "TEST_REDIS_URL="+rd.URL)
		logf("test redis at %s", rd.URL)
	}
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Env = os.Stdin, os.Stdout, os.Stderr, env
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return errors.New("tests failed")
		}
		return err
	}
	return nil
}
