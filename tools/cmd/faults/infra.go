package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"partnerapi.dev/pkg/localinfra"
	"partnerapi.dev/tools/seed"
)

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, "faults: "+format+"\n", args...) }

// infra is the suite's own Postgres and Redis.
type infra struct {
	dir       string
	pgPort    int
	redisPort int
	pg, redis *localinfra.Server
	pgURL     string
	redisURL  string
	startCtx  context.Context
}

func (in *infra) startPostgres() error {
	pg, err := localinfra.StartPostgres(in.startCtx, localinfra.PostgresOptions{Dir: filepath.Join(in.dir, "postgres"), Port: in.pgPort})
	if err != nil {
		return err
	}
	in.pg, in.pgURL = pg, pg.URL
	return nil
}

func (in *infra) startRedis() error {
	rd, err := localinfra.StartRedis(in.startCtx, localinfra.RedisOptions{Dir: filepath.Join(in.dir, "redis"), Port: in.redisPort})
	if err != nil {
		return err
	}
	in.redis, in.redisURL = rd, rd.URL
	return nil
}

// terminate sends SIGTERM to devstack's child running the named binary, as
// a rollout stops a pod; devstack starts it again.
func terminate(devstack int, name string) error {
	pid, err := childPID(devstack, name)
	if err != nil {
		return err
	}
	return syscall.Kill(pid, syscall.SIGTERM)
}

// childPID is the process id of devstack's child running the named binary.
func childPID(devstack int, name string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		var pid, ppid int
		var comm, state string
		if _, err := fmt.Sscan(string(stat), &pid, &comm, &state, &ppid); err != nil || ppid != devstack {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if argv0, _, _ := strings.Cut(string(cmdline), "\x00"); filepath.Base(argv0) == name {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no %s process under devstack", name)
}

// waitReady waits until a restarted process answers /readyz (devstack
// starts it again when it stopped cleanly).
func waitReady(ctx context.Context, internal string) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if res, err := http.Get(internal + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		sleep(ctx, 50*time.Millisecond)
	}
	return fmt.Errorf("%s not ready 60 s after its restart", internal)
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// demoToken is the demo owner's access token with every scope the load uses.
func demoToken(ctx context.Context, bin, base string) (string, error) {
	out, err := exec.CommandContext(ctx, filepath.Join(bin, "partnerctl"), "token", "--base-url", base,
		"--email", seed.OwnerEmail, "--password", seed.DemoPassword, "--client-id", seed.DemoClientID,
		"--redirect-uri", seed.DemoRedirectURI, "--scope", scopes, "--json").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("partnerctl token: %w: %s", err, ee.Stderr)
		}
		return "", fmt.Errorf("partnerctl token: %w", err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(out, &tok); err != nil || tok.AccessToken == "" {
		return "", fmt.Errorf("partnerctl token: unexpected output")
	}
	return tok.AccessToken, nil
}

// withoutEnv is the environment minus the named variables.
func withoutEnv(names ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, k) {
			out = append(out, kv)
		}
	}
	return out
}
