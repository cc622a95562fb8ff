package database_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5/pgconn"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/fault"
	"partnerapi.dev/pkg/localinfra"
	"partnerapi.dev/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var migrations = fstest.MapFS{
	"00001_items.sql": {Data: []byte("-- +goose Up\nCREATE TABLE items (id int PRIMARY KEY);\n-- +goose Down\nDROP TABLE items;\n")},
	"00002_more.sql":  {Data: []byte("-- +goose Up\nALTER TABLE items ADD COLUMN name text;\n-- +goose Down\nALTER TABLE items DROP COLUMN name;\n")},
}

func TestMigrateIsPerSchemaAndIdempotent(t *testing.T) {
	ctx := context.Background()
	url := testenv.NewDatabase(t, "empty", func(context.Context, string) error { return nil })
	open := func(schema string) *database.DB {
		db, err := database.Open(ctx, database.Config{URL: config.Secret(url)}, schema)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close(ctx) })
		return db
	}
	a, b := open("alpha"), open("beta")
	res, err := a.Migrate(ctx, migrations)
	if err != nil || len(res) != 2 {
		t.Fatalf("first migrate: %d results, %v", len(res), err)
	}
	if res, err := a.Migrate(ctx, migrations); err != nil || len(res) != 0 {
		t.Fatalf("second migrate applied %d, %v", len(res), err)
	}
	if _, err := b.Migrate(ctx, migrations); err != nil {
		t.Fatal(err)
	}
	var tables []string
	if err := a.Gorm.Raw(`SELECT table_schema || '.' || table_name FROM information_schema.tables WHERE table_schema IN ('alpha','beta') ORDER BY 1`).Scan(&tables).Error; err != nil {
		t.Fatal(err)
	}
	want := "[alpha.goose_db_version alpha.items beta.goose_db_version beta.items]"
	if fmt.Sprint(tables) != want {
		t.Fatalf("tables = %v, want %s", tables, want)
	}
	if err := a.Gorm.Exec(`INSERT INTO items (id, name) VALUES (1, 'a')`).Error; err != nil {
		t.Fatal(err)
	}
	var n int
	b.Gorm.Raw(`SELECT count(*) FROM items`).Scan(&n)
	if n != 0 {
		t.Fatal("search_path leaked between schemas")
	}
	if database.LockID("alpha") == database.LockID("beta") {
		t.Fatal("lock ids must differ per schema")
	}
}

func TestUnavailableIsRecognised(t *testing.T) {
	port, err := localinfra.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	db, err := database.Open(context.Background(), database.Config{URL: config.Secret(fmt.Sprintf("postgres://postgres@127.0.0.1:%d/x?sslmode=disable&connect_timeout=1", port))}, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	err = db.Ping(context.Background())
	if err == nil || !database.IsUnavailable(err) {
		t.Fatalf("closed port: %v, unavailable=%v", err, database.IsUnavailable(err))
	}
}

func TestOpenRejectsBadInput(t *testing.T) {
	if _, err := database.Open(context.Background(), database.Config{URL: "postgres://x"}, "Bad-Name"); err == nil {
		t.Fatal("bad schema accepted")
	}
	if _, err := database.Open(context.Background(), database.Config{URL: "::not a url"}, "ok"); err == nil {
		t.Fatal("bad url accepted")
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		kind fault.Kind
	}{
		{&pgconn.PgError{Code: "57P01"}, fault.Unavailable},
		{fmt.Errorf("query: %w", context.Canceled), fault.Unavailable},
		{&pgconn.PgError{Code: "40001"}, fault.Conflict},
		{&pgconn.PgError{Code: "23503"}, fault.Unknown},
		{errors.New("boom"), fault.Unknown},
	} {
		if k, _ := fault.Of(tc.err); k != tc.kind {
			t.Errorf("%v: kind %d, want %d", tc.err, k, tc.kind)
		}
	}
}
