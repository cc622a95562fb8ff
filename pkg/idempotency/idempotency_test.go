package idempotency_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"testing/fstest"
	"time"

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

// TestKeyIsCaseInsensitive: a UUID key is the same key in any case, and
// the request compared on a repeat holds the key in one spelling, so an
// upper-case repeat of a write replays it instead of writing again or
// answering a conflict.
func TestKeyIsCaseInsensitive(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	lower := "5d8f0a6e-2b1c-4c3d-9e8f-0a1b2c3d4e5f"
	upper := "5D8F0A6E-2B1C-4C3D-9E8F-0A1B2C3D4E5F"
	first, err := idempotency.Run(ctx, db.Gorm, idempotency.Request{Scope: "c/r/create", Key: upper, Body: body{Name: "a", IdempotencyKey: upper}}, createMenu("a"))
	if err != nil || first.Replayed {
		t.Fatalf("first: %+v %v", first, err)
	}
	again, err := idempotency.Run(ctx, db.Gorm, idempotency.Request{Scope: "c/r/create", Key: lower, Body: body{Name: "a", IdempotencyKey: lower}}, createMenu("a"))
	if err != nil || !again.Replayed || count(t, db) != 1 {
		t.Fatalf("lower-case repeat: %+v %v, %d menus", again, err, count(t, db))
	}
	for _, k := range []string{lower, upper, "5d8f0a6e-2B1C-4c3d-9e8f-0a1b2c3d4e5F"} {
		if got, ok := idempotency.NormalizeKey(k); !ok || got != lower {
			t.Errorf("NormalizeKey(%q) = %q %v", k, got, ok)
		}
	}
	for _, k := range []string{"", "5d8f0a6e2b1c4c3d9e8f0a1b2c3d4e5f", "{5d8f0a6e-2b1c-4c3d-9e8f-0a1b2c3d4e5f}", "5d8f0a6e-2b1c-4c3d-9e8f-0a1b2c3d4e5g"} {
		if _, ok := idempotency.NormalizeKey(k); ok {
			t.Errorf("NormalizeKey(%q) accepted", k)
		}
	}
	// The same key nested (a service hashing {"path":…, "body":…}) is
	// compared in one spelling too.
	nested := func(k string) any {
		return map[string]any{"path": []string{"m"}, "body": json.RawMessage(`{"idempotencyKey":"` + k + `","name":"b"}`)}
	}
	h1, _ := idempotency.Hash(nested(upper))
	h2, _ := idempotency.Hash(nested(lower))
	if h1 != h2 {
		t.Error("the key's spelling changes the request hash")
	}
}

// TestStartPurgeRunsPeriodically: the purge job a service starts deletes
// keys past the retention at start and on every tick, keeps recent ones,
// and stops with its closer.
func TestStartPurgeRunsPeriodically(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	old := func(key string) {
		t.Helper()
		if err := db.Gorm.Exec(`INSERT INTO idempotency_keys (scope, key, request_hash, status, response, created_at) VALUES ('s', ?, 'h', 201, '{}', now() - interval '25 hours')`, key).Error; err != nil {
			t.Fatal(err)
		}
	}
	keys := func() int {
		var n int
		_ = db.Gorm.Raw(`SELECT count(*) FROM idempotency_keys`).Scan(&n).Error
		return n
	}
	if _, err := idempotency.Run(ctx, db.Gorm, idempotency.Request{Scope: "s", Key: "new", Body: 1}, createMenu("a")); err != nil {
		t.Fatal(err)
	}
	old("old-1")
	closer := idempotency.StartPurge(ctx, db.Gorm, 50*time.Millisecond)
	waitFor(t, func() bool { return keys() == 1 })
	old("old-2")
	waitFor(t, func() bool { return keys() == 1 })
	stop, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := closer.Fn(stop); err != nil {
		t.Fatal(err)
	}
	old("old-3")
	time.Sleep(200 * time.Millisecond)
	if keys() != 2 {
		t.Fatal("the purge kept running after its closer")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not reached in 10 s")
}
