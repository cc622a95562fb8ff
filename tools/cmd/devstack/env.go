package main

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"partnerapi.dev/pkg/localinfra"
	"partnerapi.dev/pkg/testenv"
)

// withTestInfra runs a command (the test suite) against real Postgres and
// Redis: those in TEST_DATABASE_URL / TEST_REDIS_URL, or throwaway servers.
func withTestInfra(ctx context.Context, command []string) error {
	tmp, err := os.MkdirTemp("", "partnerapi-test-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	stamp, err := sourcesStamp()
	if err != nil {
		return err
	}
	env := append(os.Environ(), testenv.SourcesEnv+"="+stamp)
	if os.Getenv("TEST_DATABASE_URL") == "" {
		pg, err := onPort(stablePort(0), func(port int) (*localinfra.Server, error) {
			return localinfra.StartPostgres(ctx, localinfra.PostgresOptions{Dir: filepath.Join(tmp, "postgres"), Port: port})
		})
		if err != nil {
			return err
		}
		defer func() { _ = pg.Stop() }()
		env = append(env, "TEST_DATABASE_URL="+pg.URL)
		logf("test postgres at %s", pg.URL)
	}
	if os.Getenv("TEST_REDIS_URL") == "" {
		rd, err := onPort(stablePort(1), func(port int) (*localinfra.Server, error) {
			return localinfra.StartRedis(ctx, localinfra.RedisOptions{Dir: filepath.Join(tmp, "redis"), Port: port})
		})
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

// stablePort is a port on 127.0.0.1 derived from the working directory (the
// checkout), plus offset (0 Postgres, 1 Redis); 0 when there is none. The
// same server URLs from one run to the next let go test take the results of
// the packages that did not change from its cache (make test-short and
// test-one, which do not pass -count=1).
func stablePort(offset int) int {
	wd, err := os.Getwd()
	if err != nil {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(wd))
	return 40000 + int(h.Sum32()%10000)*2 + offset
}

// onPort starts a server on port, or on a free one when another process
// holds port.
func onPort(port int, start func(port int) (*localinfra.Server, error)) (*localinfra.Server, error) {
	s, err := start(port)
	if port != 0 && errors.Is(err, localinfra.ErrPortTaken) {
		return start(0)
	}
	return s, err
}

// sourcesStamp hashes the path, size and modification time of every file
// under the working directory (the checkout) but hidden folders, bin/ and
// node_modules/: the tests that build other modules' binaries read it
// (testenv.Sources), so go test runs them again when anything changed.
func sourcesStamp() (string, error) {
	h := fnv.New64a()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" || d.Name() == "node_modules"):
			return filepath.SkipDir
		case d.IsDir():
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d %d\n", path, info.Size(), info.ModTime().UnixNano())
		return nil
	})
	return fmt.Sprintf("%x", h.Sum64()), err
}
