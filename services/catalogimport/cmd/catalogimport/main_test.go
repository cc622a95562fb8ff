package main

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// migrate creates the schema with its tables (the idempotency keys
// included), twice without harm; an unknown command is refused.
func TestMigrateCommand(t *testing.T) {
	url := testenv.NewDatabase(t, "empty", func(context.Context, string) error { return nil })
	t.Setenv("DATABASE_URL", url)
	ctx := context.Background()
	for range 2 {
		if err := service.Run(ctx, spec, []string{"migrate"}); err != nil {
			t.Fatal(err)
		}
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM information_schema.tables WHERE table_schema = 'catalogimport'
		AND table_name IN ('applied_imports', 'pending_batches', 'idempotency_keys')`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Fatalf("%d of the 3 tables exist", n)
	}
	if err := service.Run(ctx, spec, []string{"import"}); err == nil || !strings.Contains(err.Error(), "serve, migrate or check-config") {
		t.Fatalf("unknown command: %v", err)
	}
}
