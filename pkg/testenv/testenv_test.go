package testenv_test

import (
	"context"
	"database/sql"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"partnerapi.dev/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestDatabasesAreClonedAndIsolated(t *testing.T) {
	migrations := 0
	migrate := func(ctx context.Context, url string) error {
		migrations++
		db, err := sql.Open("pgx", url)
		if err != nil {
			return err
		}
		defer db.Close()
		_, err = db.ExecContext(ctx, `CREATE TABLE notes (body text); INSERT INTO notes VALUES ('from template')`)
		return err
	}
	a := testenv.NewDatabase(t, "notes", migrate)
	b := testenv.NewDatabase(t, "notes", migrate)
	if a == b || migrations != 1 {
		t.Fatalf("urls %s %s, migrations %d", a, b, migrations)
	}
	dba, _ := sql.Open("pgx", a)
	defer dba.Close()
	if _, err := dba.Exec(`INSERT INTO notes VALUES ('only in a')`); err != nil {
		t.Fatal(err)
	}
	dbb, _ := sql.Open("pgx", b)
	defer dbb.Close()
	var n int
	if err := dbb.QueryRow(`SELECT count(*) FROM notes`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("b sees %d rows, %v", n, err)
	}
}

func TestRedis(t *testing.T) {
	opts, err := redis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	defer c.Close()
	if err := c.Set(context.Background(), t.Name(), "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
}

func TestTogetherRunsEveryFunctionAtOnce(t *testing.T) {
	const n = 8
	var started sync.WaitGroup
	started.Add(n)
	fns := make([]func(), n)
	for i := range fns {
		// Each returns only once all have started: run one after another,
		// they would never return.
		fns[i] = func() { started.Done(); started.Wait() }
	}
	testenv.Together(fns...)
}
