package localinfra

import (
	"context"
	"errors"
	"net/url"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestPostgresOnTakenPort: a server asked for a port another Postgres holds
// fails with ErrPortTaken rather than handing out the other server's URL,
// and the other server keeps serving.
func TestPostgresOnTakenPort(t *testing.T) {
	ctx := context.Background()
	first, err := StartPostgres(ctx, PostgresOptions{Dir: filepath.Join(t.TempDir(), "first")})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = first.Stop() }()
	second, err := StartPostgres(ctx, PostgresOptions{Dir: filepath.Join(t.TempDir(), "second"), Port: portOf(t, first.URL)})
	if !errors.Is(err, ErrPortTaken) {
		_ = second.Stop()
		t.Fatalf("start on a taken port: %v, want ErrPortTaken", err)
	}
	conn, err := pgx.Connect(ctx, first.URL)
	if err != nil {
		t.Fatalf("the first server after the second's attempt: %v", err)
	}
	_ = conn.Close(ctx)
}

// TestRedisOnTakenPort: the same for Redis, against another Redis and
// against a listener that is not Redis at all.
func TestRedisOnTakenPort(t *testing.T) {
	ctx := context.Background()
	first, err := StartRedis(ctx, RedisOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = first.Stop() }()
	second, err := StartRedis(ctx, RedisOptions{Dir: t.TempDir(), Port: portOf(t, first.URL)})
	if !errors.Is(err, ErrPortTaken) {
		_ = second.Stop()
		t.Fatalf("start on a taken port: %v, want ErrPortTaken", err)
	}
	if _, err := redisInfo(portOf(t, first.URL)); err != nil {
		t.Fatalf("the first server after the second's attempt: %v", err)
	}
}

// TestOnFreePortRetries: a start on a free port that loses it to another
// process tries another port; a start on a port the caller chose does not.
func TestOnFreePortRetries(t *testing.T) {
	var ports []int
	taken := func(port int) (*Server, error) {
		ports = append(ports, port)
		if len(ports) == 1 {
			return nil, ErrPortTaken
		}
		return &Server{}, nil
	}
	if _, err := onFreePort(0, taken); err != nil || len(ports) != 2 || ports[0] == 0 || ports[1] == 0 {
		t.Fatalf("free port: err %v after ports %v, want success on the second", err, ports)
	}
	ports = nil
	if _, err := onFreePort(41234, taken); !errors.Is(err, ErrPortTaken) || len(ports) != 1 || ports[0] != 41234 {
		t.Fatalf("chosen port: err %v after ports %v, want ErrPortTaken after one start on 41234", err, ports)
	}
	ports = nil
	always := func(port int) (*Server, error) { ports = append(ports, port); return nil, ErrPortTaken }
	if _, err := onFreePort(0, always); !errors.Is(err, ErrPortTaken) || len(ports) != 3 {
		t.Fatalf("always taken: err %v after %d starts, want ErrPortTaken after 3", err, len(ports))
	}
}

func portOf(t *testing.T, serverURL string) int {
	t.Helper()
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return port
}
