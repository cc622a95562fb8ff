package store_test

import (
	"context"
	"testing"

	"gorm.io/gorm"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/menus/migrations"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	r1    = "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a01"
	r2    = "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a02"
	cat1  = "c0000000-0000-4000-8000-000000000001"
	cat2  = "c0000000-0000-4000-8000-000000000002"
	item1 = "a0000000-0000-4000-8000-000000000001"
	menu1 = "b0000000-0000-4000-8000-000000000001"
	menu2 = "b0000000-0000-4000-8000-000000000002"
	cat9  = "c0000000-0000-4000-8000-000000000009"
	menu9 = "b0000000-0000-4000-8000-000000000009"
)

// schema is a migrated database holding, for r1, two categories, one item
// on menu1 (in cat1) and an empty menu2; for r2 a category and a menu.
func schema(t *testing.T) *gorm.DB {
	t.Helper()
	u := testenv.NewDatabase(t, "menus", database.MigrateURL("menus", migrations.FS, migrations.Go()...))
	ctx := context.Background()
	db, err := database.Open(ctx, database.Config{URL: config.Secret(u)}, "menus")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(ctx) })
	for _, q := range []string{
		`INSERT INTO categories (id, restaurant_id, name) VALUES ('` + cat1 + `', '` + r1 + `', 'Soups'), ('` + cat2 + `', '` + r1 + `', 'Desserts'), ('` + cat9 + `', '` + r2 + `', 'Other')`,
		`INSERT INTO items (id, restaurant_id, category_id, name, base_price_minor) VALUES ('` + item1 + `', '` + r1 + `', '` + cat1 + `', 'Soup', 1200)`,
		`INSERT INTO menus (id, restaurant_id, name) VALUES ('` + menu1 + `', '` + r1 + `', 'Main'), ('` + menu2 + `', '` + r1 + `', 'Draft'), ('` + menu9 + `', '` + r2 + `', 'Other')`,
		`INSERT INTO menu_categories (restaurant_id, menu_id, category_id) VALUES ('` + r1 + `', '` + menu1 + `', '` + cat1 + `')`,
		`INSERT INTO menu_items (restaurant_id, menu_id, item_id, category_id) VALUES ('` + r1 + `', '` + menu1 + `', '` + item1 + `', '` + cat1 + `')`,
		`INSERT INTO menu_selection (restaurant_id) VALUES ('` + r1 + `')`,
	} {
		if err := db.Gorm.Exec(q).Error; err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return db.Gorm
}

// The database, not only the code, refuses rows that break the model.
func TestTheSchemaRefusesBrokenRows(t *testing.T) {
	db := schema(t)
	for name, q := range map[string]string{
		"an entry whose category is not on the menu": `INSERT INTO menu_items (restaurant_id, menu_id, item_id, category_id) VALUES ('` + r1 + `', '` + menu2 + `', '` + item1 + `', '` + cat1 + `')`,
		"an entry in another category than its item's": `INSERT INTO menu_categories (restaurant_id, menu_id, category_id) VALUES ('` + r1 + `', '` + menu2 + `', '` + cat2 + `');
INSERT INTO menu_items (restaurant_id, menu_id, item_id, category_id) VALUES ('` + r1 + `', '` + menu2 + `', '` + item1 + `', '` + cat2 + `')`,
		"another restaurant's category on a menu":  `INSERT INTO menu_categories (restaurant_id, menu_id, category_id) VALUES ('` + r1 + `', '` + menu1 + `', '` + cat9 + `')`,
		"another restaurant's menu as POS menu":    `UPDATE menu_selection SET pos_menu_id = '` + menu9 + `' WHERE restaurant_id = '` + r1 + `'`,
		"a second selection row":                   `INSERT INTO menu_selection (restaurant_id, pos_menu_id) VALUES ('` + r1 + `', '` + menu2 + `')`,
		"an item in another restaurant's category": `INSERT INTO items (id, restaurant_id, category_id, name, base_price_minor) VALUES ('a0000000-0000-4000-8000-000000000002', '` + r1 + `', '` + cat9 + `', 'X', 1)`,
		"a negative price":                         `UPDATE items SET base_price_minor = -1`,
		"an unknown availability":                  `UPDATE items SET availability = 'gone'`,
		"an empty name":                            `UPDATE menus SET name = '' WHERE id = '` + menu1 + `'`,
		"a 2,001-character description":            `UPDATE items SET description = repeat('x', 2001)`,
		"an option group with max below min":       `INSERT INTO option_groups (id, restaurant_id, name, min_selections, max_selections) VALUES ('d0000000-0000-4000-8000-000000000001', '` + r1 + `', 'G', 2, 1)`,
		"a combo component of another restaurant":  `INSERT INTO combos (id, restaurant_id, name, price_minor) VALUES ('e0000000-0000-4000-8000-000000000001', '` + r2 + `', 'C', 1); INSERT INTO combo_components (combo_id, position, restaurant_id, item_id, quantity) VALUES ('e0000000-0000-4000-8000-000000000001', 0, '` + r2 + `', '` + item1 + `', 1)`,
	} {
		t.Run(name, func(t *testing.T) {
			err := db.Transaction(func(tx *gorm.DB) error { return tx.Exec(q).Error })
			if err == nil {
				t.Fatal("the database accepted it")
			}
		})
	}
}

func revision(t *testing.T, db *gorm.DB, menu string) int64 {
	t.Helper()
	var r int64
	if err := db.Raw(`SELECT revision FROM menus WHERE id = ?`, menu).Scan(&r).Error; err != nil {
		t.Fatal(err)
	}
	return r
}

// Revisions and versions move with every change, in the database.
func TestRevisionsAndVersionsMove(t *testing.T) {
	db := schema(t)
	exec := func(q string) {
		t.Helper()
		if err := db.Exec(q).Error; err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	steps := []struct {
		change string
		q      string
		menu   string
		moves  bool
	}{
		{"an item on the menu changes", `UPDATE items SET name = 'Soup of the day'`, menu1, true},
		{"an item changes to the same values", `UPDATE items SET name = 'Soup of the day'`, menu1, false},
		{"a category on the menu is renamed", `UPDATE categories SET name = 'Hot soups' WHERE id = '` + cat1 + `'`, menu1, true},
		{"a category joins the menu", `INSERT INTO menu_categories (restaurant_id, menu_id, category_id) VALUES ('` + r1 + `', '` + menu2 + `', '` + cat1 + `')`, menu2, true},
		{"an entry is added", `INSERT INTO menu_items (restaurant_id, menu_id, item_id, category_id, price_override_minor) VALUES ('` + r1 + `', '` + menu2 + `', '` + item1 + `', '` + cat1 + `', 990)`, menu2, true},
		{"an entry's price changes", `UPDATE menu_items SET price_override_minor = 1090 WHERE menu_id = '` + menu2 + `'`, menu2, true},
		{"the menu is renamed", `UPDATE menus SET name = 'Autumn' WHERE id = '` + menu2 + `'`, menu2, true},
		{"the menu becomes the POS menu", `UPDATE menu_selection SET pos_menu_id = '` + menu2 + `'`, menu2, true},
		{"another menu is changed", `UPDATE menus SET name = 'Main 2' WHERE id = '` + menu1 + `'`, menu2, false},
		{"the menu stops being the POS menu", `UPDATE menu_selection SET pos_menu_id = '` + menu1 + `'`, menu2, true},
		{"an entry is removed", `DELETE FROM menu_items WHERE menu_id = '` + menu2 + `'`, menu2, true},
	}
	for _, s := range steps {
		before := revision(t, db, s.menu)
		exec(s.q)
		if moved := revision(t, db, s.menu) != before; moved != s.moves {
			t.Fatalf("%s: revision moved %v, want %v", s.change, moved, s.moves)
		}
	}
	var version int64
	db.Raw(`SELECT version FROM items WHERE id = ?`, item1).Scan(&version)
	exec(`UPDATE items SET visible = false`)
	var after int64
	db.Raw(`SELECT version FROM items WHERE id = ?`, item1).Scan(&after)
	if after != version+1 {
		t.Fatalf("version %d -> %d", version, after)
	}
}
