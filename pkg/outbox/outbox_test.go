package outbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/outbox"
	"partnerapi.dev/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// versions stands for a service's own rows: each restaurant's row is taken
// first in a writer's transaction, so its version counts that restaurant's
// committed changes in commit order; the relay must deliver them as 1, 2, 3 …
var migrations = fstest.MapFS{
	"00001_versions.sql": {Data: []byte("-- +goose Up\nCREATE TABLE versions (restaurant text PRIMARY KEY, v int NOT NULL);\n" +
		"INSERT INTO versions SELECT 'r' || g, 0 FROM generate_series(1, 5) g;\n-- +goose Down\nDROP TABLE versions;\n")},
}

func openDB(t testing.TB) *database.DB {
	t.Helper()
	url := testenv.NewDatabase(t, "outbox", database.MigrateURL("svc", migrations, outbox.Migration(2), outbox.TraceMigration(3), outbox.ActorMigration(4)))
	db, err := database.Open(context.Background(), database.Config{URL: config.Secret(url), MaxOpenConns: 30}, "svc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(context.Background()) })
	return db
}

type payload struct {
	Restaurant string `json:"restaurant"`
	V          int    `json:"v"`
}

type received struct {
	ID           string          `json:"id"`
	RestaurantID string          `json:"restaurantId"`
	Data         json.RawMessage `json:"data"`
}

// eventsServer stands for the events service's append API: it records
// every event it is sent and fails the requests fail says to fail.
type eventsServer struct {
	mu   sync.Mutex
	got  []received
	fail func() bool
}

func (s *eventsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct{ Events []received }
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	s.mu.Lock()
	s.got = append(s.got, body.Events...)
	fail := s.fail != nil && s.fail()
	s.mu.Unlock()
	if fail {
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
		return
	}
	w.Write([]byte(`{"data":{"appended":0,"duplicates":0}}`))
}

func (s *eventsServer) received() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.got...)
}

// sender posts to url; acked collects the ids of every acknowledged send.
func sender(url string, acked *sync.Map) outbox.SendFunc {
	return func(ctx context.Context, events []outbox.Recorded) error {
		var body struct {
			Events []received `json:"events"`
		}
		for _, e := range events {
			body.Events = append(body.Events, received{ID: e.ID, RestaurantID: e.RestaurantID, Data: e.Data})
		}
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(raw))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			return fmt.Errorf("status %d", res.StatusCode)
		}
		for _, e := range events {
			if _, again := acked.LoadOrStore(e.ID, true); again {
				return fmt.Errorf("event %s acknowledged twice", e.ID)
			}
		}
		return nil
	}
}

// write is one writer's transaction: take the restaurant's row, wait
// (committing late), record the event, then commit or roll back.
func write(ctx context.Context, db *gorm.DB, rng *rand.Rand) (committed *payload, err error) {
	restaurant := fmt.Sprintf("r%d", 1+rng.IntN(5))
	rollback := rng.IntN(10) == 0
	var p payload
	errRollback := errors.New("rolled back on purpose")
	err = db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Raw(`UPDATE versions SET v = v + 1 WHERE restaurant = ? RETURNING v`, restaurant).Scan(&p.V).Error; err != nil {
			return err
		}
		p.Restaurant = restaurant
		time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
		if err := outbox.Record(tx, outbox.Event{Type: "thing.changed", RestaurantID: restaurant, Data: p}); err != nil {
			return err
		}
		if rollback {
			return errRollback
		}
		return nil
	})
	if errors.Is(err, errRollback) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// writeConcurrently runs 8 writers for n transactions in all and returns
// how many committed per restaurant.
func writeConcurrently(t *testing.T, db *gorm.DB, n int) map[string]int {
	t.Helper()
	var mu sync.Mutex
	committed := map[string]int{}
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for left.Add(-1) >= 0 {
				p, err := write(context.Background(), db, rng)
				if err != nil {
					t.Error(err)
					return
				}
				if p != nil {
					mu.Lock()
					committed[p.Restaurant]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return committed
}

// checkOrder asserts every committed event arrived, per restaurant in
// commit order (versions 1, 2, 3 …), where a repeat may only restart from an
// earlier version (a resent batch), never skip one.
func checkOrder(t *testing.T, got []received, committed map[string]int) {
	t.Helper()
	next := map[string]int{}
	ids := map[int]map[string]string{}
	for _, e := range got {
		var p payload
		if err := json.Unmarshal(e.Data, &p); err != nil {
			t.Fatal(err)
		}
		if p.Restaurant != e.RestaurantID {
			t.Fatalf("event %s: restaurant %s, data says %s", e.ID, e.RestaurantID, p.Restaurant)
		}
		key := p.V
		if ids[key] == nil {
			ids[key] = map[string]string{}
		}
		if prev, ok := ids[key][p.Restaurant]; ok && prev != e.ID {
			t.Fatalf("%s version %d sent under two ids", p.Restaurant, p.V)
		}
		ids[key][p.Restaurant] = e.ID
		if p.V > next[p.Restaurant]+1 {
			t.Fatalf("%s: version %d arrived after %d: an event was skipped or reordered", p.Restaurant, p.V, next[p.Restaurant])
		}
		next[p.Restaurant] = max(next[p.Restaurant], p.V)
	}
	for r, n := range committed {
		if next[r] != n {
			t.Errorf("%s: %d events committed, last forwarded version %d", r, n, next[r])
		}
	}
	for r, v := range next {
		if v != committed[r] {
			t.Errorf("%s: forwarded up to version %d but only %d committed", r, v, committed[r])
		}
	}
}

func remaining(t *testing.T, db *gorm.DB) int {
	var n int
	if err := db.Raw(`SELECT count(*) FROM outbox_events`).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func waitEmpty(t *testing.T, db *gorm.DB) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for remaining(t, db) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("outbox still holds %d events", remaining(t, db))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRelayForwardsLateCommitsInCommitOrderExactlyOnce(t *testing.T) {
	db := openDB(t)
	srv := &eventsServer{}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	var acked sync.Map
	relay := &outbox.Relay{DB: db.Gorm, Send: sender(hs.URL, &acked), Batch: 7, Poll: 10 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- relay.Run(ctx) }()

	committed := writeConcurrently(t, db.Gorm, 800)
	waitEmpty(t, db.Gorm)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := srv.received()
	total := 0
	for _, n := range committed {
		total += n
	}
	if len(got) != total {
		t.Fatalf("forwarded %d events, %d committed (no failures: each exactly once)", len(got), total)
	}
	checkOrder(t, got, committed)
}

func TestRelayKilledAndFailingLosesNothing(t *testing.T) {
	db := openDB(t)
	rng := rand.New(rand.NewPCG(1, 2))
	// The server draws from its own source, under its lock.
	failures := rand.New(rand.NewPCG(3, 4))
	srv := &eventsServer{fail: func() bool { return failures.IntN(4) == 0 }}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	var acked sync.Map
	writing := make(chan map[string]int)
	go func() { writing <- writeConcurrently(t, db.Gorm, 600) }()
	// Relays are started and killed while the writers run, each after a
	// random time, often in the middle of a send.
	var committed map[string]int
	for committed == nil {
		relay := &outbox.Relay{DB: db.Gorm, Send: sender(hs.URL, &acked), Batch: 5, Poll: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond}
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(5+rng.IntN(40))*time.Millisecond)
		_ = relay.Run(ctx)
		cancel()
		select {
		case committed = <-writing:
		default:
		}
	}
	srv.mu.Lock()
	srv.fail = nil
	srv.mu.Unlock()
	relay := &outbox.Relay{DB: db.Gorm, Send: sender(hs.URL, &acked), Poll: 5 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- relay.Run(ctx) }()
	waitEmpty(t, db.Gorm)
	cancel()
	<-done
	// sender fails the test's send on an id acknowledged twice; here every
	// committed id must have been acknowledged once.
	n := 0
	acked.Range(func(any, any) bool { n++; return true })
	total := 0
	for _, c := range committed {
		total += c
	}
	if n != total {
		t.Fatalf("%d events acknowledged, %d committed", n, total)
	}
	checkOrder(t, srv.received(), committed)
}

func TestRecordIsPartOfTheTransaction(t *testing.T) {
	db := openDB(t)
	err := db.Gorm.Transaction(func(tx *gorm.DB) error {
		if err := outbox.Record(tx, outbox.Event{Type: "a", RestaurantID: "r1"}, outbox.Event{Type: "b", RestaurantID: "r1"}); err != nil {
			return err
		}
		return errors.New("stop")
	})
	if err == nil || remaining(t, db.Gorm) != 0 {
		t.Fatalf("rolled back transaction left %d events (err %v)", remaining(t, db.Gorm), err)
	}
	if err := db.Gorm.Transaction(func(tx *gorm.DB) error {
		return outbox.Record(tx, outbox.Event{Type: "a", RestaurantID: "r1", Data: map[string]int{"x": 1}}, outbox.Event{Type: "b", RestaurantID: "r2"})
	}); err != nil {
		t.Fatal(err)
	}
	var rows []outbox.Recorded
	db.Gorm.Raw(`SELECT pos, id, type, restaurant_id, occurred_at, data FROM outbox_events ORDER BY pos`).Scan(&rows)
	if len(rows) != 2 || rows[0].Pos != 1 || rows[1].Pos != 2 || rows[0].Type != "a" || string(rows[0].Data) != `{"x":1}` {
		t.Fatalf("recorded %+v: want positions 1, 2 (the rolled back ones given back)", rows)
	}
}

func TestNewID(t *testing.T) {
	re := regexp.MustCompile(`^evt_[0-9A-HJKMNP-TV-Z]{26}$`)
	seen := map[string]bool{}
	prev := ""
	for range 1000 {
		id := outbox.NewID()
		if !re.MatchString(id) || seen[id] {
			t.Fatalf("bad or repeated id %q", id)
		}
		if id[:14] < prev[:min(len(prev), 14)] {
			t.Fatalf("id %s sorts before an earlier one %s", id, prev)
		}
		seen[id], prev = true, id
	}
}

func TestRecordPgx(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn()
		if err := pgx.BeginFunc(ctx, pc, func(tx pgx.Tx) error {
			if err := outbox.RecordPgx(ctx, tx, outbox.Event{Type: "a", RestaurantID: "r1"}); err != nil {
				return err
			}
			return errors.New("stop")
		}); err == nil {
			t.Fatal("no error")
		}
		return pgx.BeginFunc(ctx, pc, func(tx pgx.Tx) error {
			return outbox.RecordPgx(ctx, tx, outbox.Event{Type: "b", RestaurantID: "r1", Data: []int{1}}, outbox.Event{Type: "c", RestaurantID: "r2"})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	var rows []outbox.Recorded
	db.Gorm.Raw(`SELECT pos, id, type, restaurant_id, occurred_at, data FROM outbox_events ORDER BY pos`).Scan(&rows)
	if len(rows) != 2 || rows[0].Pos != 1 || rows[0].Type != "b" || string(rows[0].Data) != `[1]` || rows[1].Pos != 2 || rows[1].Type != "c" {
		t.Fatalf("recorded %+v", rows)
	}
}

// Events recorded while serving a partner request carry the authorization
// the gateway signed (client, grant, user), through Record and RecordPgx
// alike; others carry none.
func TestRecordCarriesTheActor(t *testing.T) {
	db := openDB(t)
	who := internalctx.Context{ClientID: "demo-partner", GrantID: "g-1", UserID: "u-1", Scopes: []string{"x"}}
	partner := internalctx.NewContext(context.Background(), who)
	if err := db.Gorm.WithContext(partner).Transaction(func(tx *gorm.DB) error {
		return outbox.Record(tx, outbox.Event{Type: "by-partner", RestaurantID: "r1"})
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Gorm.Transaction(func(tx *gorm.DB) error {
		return outbox.Record(tx, outbox.Event{Type: "by-nobody", RestaurantID: "r1"})
	}); err != nil {
		t.Fatal(err)
	}
	conn, err := db.SQL.Conn(partner)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.Raw(func(dc any) error {
		return pgx.BeginFunc(partner, dc.(*stdlib.Conn).Conn(), func(tx pgx.Tx) error {
			return outbox.RecordPgx(partner, tx, outbox.Event{Type: "bulk-by-partner", RestaurantID: "r2"})
		})
	}); err != nil {
		t.Fatal(err)
	}
	var got []outbox.Recorded
	relay := &outbox.Relay{DB: db.Gorm, Send: func(_ context.Context, rows []outbox.Recorded) error { got = append(got, rows...); return nil }}
	if _, err := relay.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	str := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	want := map[string][3]string{"by-partner": {"demo-partner", "g-1", "u-1"}, "by-nobody": {"<nil>", "<nil>", "<nil>"}, "bulk-by-partner": {"demo-partner", "g-1", "u-1"}}
	if len(got) != len(want) {
		t.Fatalf("forwarded %d events, want %d", len(got), len(want))
	}
	for _, e := range got {
		if a := [3]string{str(e.ClientID), str(e.GrantID), str(e.UserID)}; a != want[e.Type] {
			t.Errorf("%s: actor %v, want %v", e.Type, a, want[e.Type])
		}
	}
}

// A service whose schema is not migrated yet (its pod started before the migration
// finished) gets a relay error that says so, not a driver's conversion error.
func TestRelayBeforeMigrationSaysTheSchemaIsMissing(t *testing.T) {
	url := testenv.NewDatabase(t, "outbox-empty", func(context.Context, string) error { return nil })
	db, err := database.Open(context.Background(), database.Config{URL: config.Secret(url)}, "svc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(context.Background()) })
	relay := &outbox.Relay{DB: db.Gorm, Send: func(context.Context, []outbox.Recorded) error { return nil }}
	_, err = relay.Flush(context.Background())
	if err == nil || !strings.Contains(err.Error(), `schema "svc" does not exist yet`) {
		t.Fatalf("Flush before migration: %v, want the missing schema named", err)
	}
}
