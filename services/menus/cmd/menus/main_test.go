package main

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const catalog = `{"restaurantId":"0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a01",` +
	`"categories":[{"id":"c0000000-0000-4000-8000-000000000001","name":"Soups","visible":true}],` +
	`"items":[{"id":"a0000000-0000-4000-8000-000000000001","categoryId":"c0000000-0000-4000-8000-000000000001","name":"Soup","basePriceMinor":1200,` +
	`"visible":true,"showInKitchen":true,"productType":"food","availability":"available"}],` +
	`"menus":[{"id":"b0000000-0000-4000-8000-000000000001","name":"Main","entries":[{"itemId":"a0000000-0000-4000-8000-000000000001","priceOverrideMinor":null}]}],` +
	`"posMenuId":"b0000000-0000-4000-8000-000000000001","onlineMenuId":null}`

// import migrates, loads a file, loads it again (nothing changes) and names
// the bad line of a broken file; unknown commands are refused.
func TestImportCommand(t *testing.T) {
	url := testenv.NewDatabase(t, "empty", func(context.Context, string) error { return nil })
	t.Setenv("DATABASE_URL", url)
	dir := t.TempDir()
	write := func(name string, lines ...string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ctx := context.Background()
	file := write("a.ndjson", catalog)
	for range 2 {
		if err := service.Run(ctx, spec, []string{"import", "--file", file}); err != nil {
			t.Fatal(err)
		}
	}
	err := service.Run(ctx, spec, []string{"import", "--file", write("b.ndjson", catalog, strings.Replace(catalog, `"available"`, `"gone"`, 1))})
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("want the bad line named, got %v", err)
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var items, entries int
	var pos string
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM menus.items), (SELECT count(*) FROM menus.menu_items), (SELECT pos_menu_id::text FROM menus.menu_selection)`).Scan(&items, &entries, &pos); err != nil {
		t.Fatal(err)
	}
	if items != 1 || entries != 1 || pos != "b0000000-0000-4000-8000-000000000001" {
		t.Fatalf("%d items, %d entries, POS %s", items, entries, pos)
	}
	if err := service.Run(ctx, spec, []string{"publish"}); err == nil {
		t.Fatal("an unknown command ran")
	}
}
