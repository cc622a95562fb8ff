package database_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/localinfra"
	"partnerapi.dev/pkg/testenv"
)

// A frozen Postgres (SIGSTOP: the kernel still accepts connections, nothing
// answers, no server-side timeout fires) must give reads a 503 envelope
// within the statement bound, then be skipped by the breaker, and be used
// again as soon as it answers.
func TestHungDatabaseFailsFastAndRecovers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a private Postgres")
	}
	ctx := context.Background()
	pg, err := localinfra.StartPostgres(ctx, localinfra.PostgresOptions{Dir: t.TempDir()})
	if err != nil {
		t.Skipf("no private Postgres: %v", err)
	}
	t.Cleanup(func() { _ = pg.Resume(); _ = pg.Stop() })
	db, err := database.Open(ctx, database.Config{URL: config.Secret(pg.URL), ConnectTimeout: 700 * time.Millisecond,
		StatementTimeout: 800 * time.Millisecond, IdleInTransactionTimeout: 30 * time.Second}, "hung")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(ctx) })
	if _, err := db.Migrate(ctx, migrations); err != nil {
		t.Fatal(err)
	}
	app := httpx.New(httpx.Options{Name: "hung", NoTracing: true, Ready: []httpx.Check{{Name: "database", Fn: db.Ping}}}, func(r fiber.Router) {
		r.Get("/items", func(c *fiber.Ctx) error {
			var n int64
			if err := db.Gorm.WithContext(c.UserContext()).Raw(`SELECT count(*) FROM items`).Scan(&n).Error; err != nil {
				return err
			}
			return c.JSON(fiber.Map{"count": n})
		})
	})
	get := func(path string) (int, string, time.Duration) {
		t.Helper()
		start := time.Now()
		// No client-side timeout: a hang shows as the test's own deadline.
		res, err := app.Test(httptest.NewRequest(http.MethodGet, path, nil), -1)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body), time.Since(start)
	}
	if code, body, _ := get("/items"); code != 200 {
		t.Fatalf("healthy: %d %s", code, body)
	}

	// Idle over a second: database/sql checks the connection with a ping
	// before handing it out, which must be bounded too.
	time.Sleep(1100 * time.Millisecond)
	if err := pg.Pause(); err != nil {
		t.Fatal(err)
	}
	// The pooled connection's statement hits the bound, then connections
	// to the frozen server hit the connect bound, until the breaker opens.
	for i := 0; i < 3; i++ {
		code, body, took := get("/items")
		if code != 503 || !strings.Contains(body, `"error":"service_unavailable"`) {
			t.Fatalf("hung read %d: %d %s", i, code, body)
		}
		t.Logf("hung read %d: %v", i, took)
		// Generous: the bound is 800 ms; without it this would never return.
		if took > 3*time.Second {
			t.Fatalf("hung read %d took %v", i, took)
		}
	}
	// Open: refused without touching the database.
	err = db.Gorm.Raw(`SELECT 1`).Scan(new(int)).Error
	if !errors.Is(err, database.ErrUnavailable) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("breaker did not refuse: %v", err)
	}
	if !database.IsUnavailable(err) {
		t.Fatalf("refusal is not an outage: %v", err)
	}
	if code, body, _ := get("/items"); code != 503 || !strings.Contains(body, `"error":"service_unavailable"`) {
		t.Fatalf("breaker open: %d %s", code, body)
	}
	if code, _, _ := get("/readyz"); code != 503 {
		t.Fatalf("readyz while hung: %d", code)
	}

	if err := pg.Resume(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body, _ := get("/items")
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not back after resume: %d %s", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, _, _ := get("/readyz"); code != 200 {
		t.Fatalf("readyz after resume: %d", code)
	}
}

// Statements run with an Unbounded context (imports, migrations) are not
// cut by the statement bound.
func TestUnboundedOutlivesTheStatementBound(t *testing.T) {
	ctx := context.Background()
	url := testenvURL(t)
	db, err := database.Open(ctx, database.Config{URL: config.Secret(url), StatementTimeout: 100 * time.Millisecond}, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(ctx) })
	if err := db.Gorm.WithContext(ctx).Exec(`SELECT pg_sleep(0.3)`).Error; !database.IsUnavailable(err) {
		t.Fatalf("bounded statement past its bound: %v", err)
	}
	if err := db.Gorm.WithContext(database.Unbounded(ctx)).Exec(`SELECT pg_sleep(0.3)`).Error; err != nil {
		t.Fatalf("unbounded statement: %v", err)
	}
	if _, err := db.SQL.ExecContext(database.Unbounded(ctx), `SELECT pg_sleep(0.3)`); err != nil {
		t.Fatalf("unbounded statement through database/sql: %v", err)
	}
}

func testenvURL(t *testing.T) string {
	return testenv.NewDatabase(t, "empty", func(context.Context, string) error { return nil })
}

// Statements cut by the bound three times in a row open the breaker: the
// next statement is refused without reaching the database, until the probe
// finds the database answering.
func TestRepeatedTimeoutsOpenTheBreakerUntilAProbeAnswers(t *testing.T) {
	ctx := context.Background()
	db, err := database.Open(ctx, database.Config{URL: config.Secret(testenvURL(t)), StatementTimeout: 100 * time.Millisecond}, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(ctx) })
	for i := 0; i < 3; i++ {
		if err := db.Gorm.WithContext(ctx).Exec(`SELECT pg_sleep(0.3)`).Error; !database.IsUnavailable(err) || errors.Is(err, database.ErrUnavailable) {
			t.Fatalf("slow statement %d: %v", i, err)
		}
	}
	if err := db.Gorm.WithContext(ctx).Exec(`SELECT 1`).Error; !errors.Is(err, database.ErrUnavailable) {
		t.Fatalf("after three timeouts: %v", err)
	}
	if err := db.Ping(ctx); !errors.Is(err, database.ErrUnavailable) {
		t.Fatalf("readiness while open: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := db.Gorm.WithContext(ctx).Exec(`SELECT 1`).Error
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("breaker still open: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
