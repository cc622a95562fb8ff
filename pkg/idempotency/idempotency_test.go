package idempotency_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"testing/fstest"

	"gorm.io/gorm"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/idempotency"
	"partnerapi.dev/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var migrations = fstest.MapFS{
	"00001_menus.sql": {Data: []byte("-- +goose Up\nCREATE TABLE menus (id serial PRIMARY KEY, name text NOT NULL);\n-- +goose Down\nDROP TABLE menus;\n")},
}

func openDB(t *testing.T) *database.DB {
	t.Helper()
	url := testenv.NewDatabase(t, "idempotency", database.MigrateURL("demo", migrations, idempotency.Migration(2)))
	db, err := database.Open(context.Background(), database.Config{URL: config.Secret(url), MaxOpenConns: 30}, "demo")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(context.Background()) })
	return db
}

type body struct {
	Name           string `json:"name"`
	IdempotencyKey string `json:"idempotencyKey"`
}

func createMenu(name string) idempotency.WriteFunc {
	return func(tx *gorm.DB) (int, any, error) {
		var id int
		if err := tx.Raw(`INSERT INTO menus (name) VALUES (?) RETURNING id`, name).Scan(&id).Error; err != nil {
			return 0, nil, err
		}
		return 201, map[string]any{"menuId": id, "name": name, "replayed": false}, nil
	}
}

func count(t *testing.T, db *database.DB) int {
	var n int
	if err := db.Gorm.Raw(`SELECT count(*) FROM menus`).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func TestReplayAndConflict(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	req := idempotency.Request{Scope: "client/r1/create-menu", Key: "k1", Body: body{Name: "Lunch", IdempotencyKey: "k1"}}
	first, err := idempotency.Run(ctx, db.Gorm, req, createMenu("Lunch"))
	if err != nil || first.Status != 201 || first.Replayed {
		t.Fatalf("first: %+v %v", first, err)
	}
	again, err := idempotency.Run(ctx, db.Gorm, req, createMenu("Lunch"))
	if err != nil || !again.Replayed || again.Status != 201 {
		t.Fatalf("replay: %+v %v", again, err)
	}
	var a, b map[string]any
	_ = json.Unmarshal(first.Data, &a)
	_ = json.Unmarshal(again.Data, &b)
	if a["menuId"] != b["menuId"] || b["replayed"] != true || a["replayed"] != false {
		t.Fatalf("replayed data differs: %s vs %s", first.Data, again.Data)
	}
	other := req
	other.Body = body{Name: "Dinner", IdempotencyKey: "k1"}
	if _, err := idempotency.Run(ctx, db.Gorm, other, createMenu("Dinner")); !errors.Is(err, idempotency.ErrKeyReused) {
		t.Fatalf("different body: %v", err)
	}
	otherScope := req
	otherScope.Scope = "client/r2/create-menu"
	if res, err := idempotency.Run(ctx, db.Gorm, otherScope, createMenu("Lunch")); err != nil || res.Replayed {
		t.Fatalf("same key in another scope must be a new write: %+v %v", res, err)
	}
	if n := count(t, db); n != 2 {
		t.Fatalf("menus = %d, want 2", n)
	}
}

func TestFailedWriteLeavesNoKey(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	req := idempotency.Request{Scope: "s", Key: "k", Body: body{Name: "x"}}
	boom := errors.New("boom")
	_, err := idempotency.Run(ctx, db.Gorm, req, func(tx *gorm.DB) (int, any, error) {
		if err := tx.Exec(`INSERT INTO menus (name) VALUES ('half')`).Error; err != nil {
			return 0, nil, err
		}
		return 0, nil, boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if n := count(t, db); n != 0 {
		t.Fatalf("half-written change kept: %d rows", n)
	}
	res, err := idempotency.Run(ctx, db.Gorm, req, createMenu("x"))
	if err != nil || res.Replayed {
		t.Fatalf("retry after failure: %+v %v", res, err)
	}
}

func TestConcurrentDuplicatesWriteOnce(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	req := idempotency.Request{Scope: "s", Key: "same", Body: body{Name: "Brunch"}}
	const n = 20
	var wg sync.WaitGroup
	results := make([]idempotency.Result, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { results[i], errs[i] = idempotency.Run(ctx, db.Gorm, req, createMenu("Brunch")) })
	}
	wg.Wait()
	fresh := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if !results[i].Replayed {
			fresh++
		}
	}
	if fresh != 1 {
		t.Fatalf("%d calls wrote, want exactly 1", fresh)
	}
	if c := count(t, db); c != 1 {
		t.Fatalf("menus = %d, want 1", c)
	}
}

func TestCanonicalHashIgnoresKeyOrderAndSpace(t *testing.T) {
	a, _ := idempotency.Hash(json.RawMessage(`{"b":1,"a":[1,2]}`))
	b, _ := idempotency.Hash(json.RawMessage(`{ "a": [1, 2], "b": 1 }`))
	c, _ := idempotency.Hash(json.RawMessage(`{"a":[2,1],"b":1}`))
	if a != b || a == c {
		t.Fatalf("hashes: %s %s %s", a, b, c)
	}
}

func TestPurgeKeepsRecentKeys(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	if _, err := idempotency.Run(ctx, db.Gorm, idempotency.Request{Scope: "s", Key: "new", Body: 1}, createMenu("a")); err != nil {
		t.Fatal(err)
	}
	if err := db.Gorm.Exec(`INSERT INTO idempotency_keys (scope, key, request_hash, status, response, created_at) VALUES ('s', 'old', 'h', 201, '{}', now() - interval '3 days')`).Error; err != nil {
		t.Fatal(err)
	}
	n, err := idempotency.Purge(ctx, db.Gorm, 0)
	if err != nil || n != 1 {
		t.Fatalf("purged %d, %v", n, err)
	}
}
