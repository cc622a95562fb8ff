package service_test

import (
	"context"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"partnerapi.dev/pkg/service"
	"partnerapi.dev/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var oneTable = fstest.MapFS{"00001_t.sql": {Data: []byte("-- +goose Up\nCREATE TABLE t (id int);\n")}}

// migrate waits for a database that answers only after a while (still
// starting, or a NetworkPolicy agent not yet letting the new pod's packets
// through), then migrates.
func TestMigrateWaitsForTheDatabase(t *testing.T) {
	db := testenv.NewDatabase(t, "empty", func(context.Context, string) error { return nil })
	u, err := url.Parse(db)
	if err != nil {
		t.Fatal(err)
	}
	// A port where nothing listens for 2 s, then a proxy to the database.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	opens, target := time.Now().Add(2*time.Second), u.Host
	go func() {
		time.Sleep(time.Until(opens))
		proxy(t, addr, target)
	}()
	u.Host = addr
	t.Setenv("DATABASE_URL", u.String())
	t.Setenv("MIGRATE_WAIT", "30s")
	spec := service.Spec[*serve]{Name: "waiting", Migrations: oneTable}
	if err := service.Run(context.Background(), spec, []string{"migrate"}); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if time.Now().Before(opens) {
		t.Fatal("migrate finished before the database could answer")
	}
}

// A database that never answers fails migrate once MIGRATE_WAIT has passed,
// saying so.
func TestMigrateGivesUpAfterTheWait(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	t.Setenv("DATABASE_URL", "postgres://postgres@"+addr+"/postgres?sslmode=disable")
	t.Setenv("MIGRATE_WAIT", "2s")
	start := time.Now()
	err = service.Run(context.Background(), service.Spec[*serve]{Name: "waiting", Migrations: oneTable}, []string{"migrate"})
	if err == nil || !strings.Contains(err.Error(), "did not answer within MIGRATE_WAIT (2s)") {
		t.Fatalf("got %v", err)
	}
	if took := time.Since(start); took < 2*time.Second || took > 20*time.Second {
		t.Fatalf("gave up after %s", took)
	}
}

// proxy forwards connections on addr to target until the test ends.
func proxy(t *testing.T, addr, target string) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Error(err)
		return
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			up, err := net.Dial("tcp", target)
			if err != nil {
				return
			}
			defer up.Close()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			_, _ = io.Copy(c, up)
		}()
	}
}
