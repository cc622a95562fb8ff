package api_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/servicetest"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/events/internal/api"
	"partnerapi.dev/services/events/internal/sealed"
	"partnerapi.dev/services/events/internal/store"
	"partnerapi.dev/services/events/migrations"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	restA = "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a01"
	restB = "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a02"
	restC = "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a03"
	token = "test-events-token-0123456789"
)

// Scopes of grants, by what they may read.
var (
	allScopes = []string{contracts.ScopeRestaurantRead, contracts.ScopeOrdersRead, contracts.ScopeAccountingRead,
		contracts.ScopeAnalyticsRead, contracts.ScopeCorrectionsWrite, contracts.ScopeMenuRead, contracts.ScopeCatalogImport}
	ordersOnly = []string{contracts.ScopeRestaurantRead, contracts.ScopeOrdersRead}
)

type env struct {
	t     testing.TB
	app   *fiber.App
	keys  *internalctx.Keyring
	db    *database.DB
	store *store.Store
	// listener wakes long polls (and, in a benchmark, the webhook worker).
	listener *store.Listener
	dsn      string
	// clock is the store's clock; tests move it.
	mu    sync.Mutex
	clock time.Time
	// skipSpec: benchmarks measure the service, not the document check.
	skipSpec bool
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvAt(t, testenv.NewDatabase(t, "events", database.MigrateURL("events", migrations.FS, migrations.Go()...)))
}

// newEnvAt serves the migrated events database at u.
func newEnvAt(t testing.TB, u string) *env {
	t.Helper()
	return newEnvOn(t, database.Config{URL: config.Secret(u)})
}

// newEnvOn serves the migrated events database of cfg, reading the feed
// from its replica when cfg names one.
func newEnvOn(t testing.TB, cfg database.Config) *env {
	t.Helper()
	u := cfg.URL.Reveal()
	ctx, cancel := context.WithCancel(context.Background())
	db, err := database.Open(ctx, cfg, "events")
	if err != nil {
		t.Fatal(err)
	}
	reads, err := database.OpenReads(ctx, cfg, "events", db)
	if err != nil {
		t.Fatal(err)
	}
	keys := servicetest.Keys(t)
	e := &env{t: t, keys: keys, db: db, dsn: u, clock: time.Now().UTC()}
	e.store = &store.Store{DB: db.Gorm, Reads: reads, Now: e.now, Secrets: testSecrets(t)}
	l := &store.Listener{URL: u}
	e.listener = l
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done; _ = reads.Close(ctx); _ = db.Close(ctx) })
	h := &api.Handlers{Repo: e.store, Webhooks: e.store, Activity: e.store, Notify: l, Keys: keys, Token: token, Secrets: e.store.Secrets, AllowLoopbackHTTP: true, Now: e.now}
	e.app = h.App(nil)
	return e
}

func (e *env) now() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.clock
}

func (e *env) advance(d time.Duration) {
	e.mu.Lock()
	e.clock = e.clock.Add(d)
	e.mu.Unlock()
}

// response is one answer.
type response struct {
	status int
	body   []byte
}

// decode is r's body as a T; t fails when it is not that JSON.
func decode[T any](t testing.TB, r response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("body %s: %v", r.body, err)
	}
	return v
}

// data is the data of r as a T.
func data[T any](t testing.TB, r response) T {
	t.Helper()
	return decode[struct {
		Data T `json:"data"`
	}](t, r).Data
}

// feedPage is the feed's data.
type feedPage struct {
	Events []struct {
		ID           string          `json:"id"`
		Type         string          `json:"type"`
		Timestamp    time.Time       `json:"timestamp"`
		RestaurantID string          `json:"restaurantId"`
		Seq          int64           `json:"seq"`
		Data         json.RawMessage `json:"data"`
	} `json:"events"`
	NextAfter int64 `json:"nextAfter"`
	HasMore   bool  `json:"hasMore"`
	HeadSeq   int64 `json:"headSeq"`
	OldestSeq int64 `json:"oldestSeq"`
}

// feed reads a page as a grant with scopes on restaurant tenant (the
// path's restaurant unless tenant is given) and checks the answer against
// the OpenAPI document.
func (e *env) feed(path string, scopes []string, tenant ...string) (response, feedPage) {
	e.t.Helper()
	ten := strings.Split(strings.TrimPrefix(path, "/v1/restaurants/"), "/")[0]
	if len(tenant) > 0 {
		ten = tenant[0]
	}
	c := servicetest.NewClient(e.t, e.app, e.keys, scopes...)
	c.Unchecked, c.Timeout = e.skipSpec, time.Minute
	status, raw := c.Do("GET", path, ten, nil, nil)
	var out struct {
		Data feedPage `json:"data"`
	}
	if status == 200 {
		if err := json.Unmarshal(raw, &out); err != nil {
			e.t.Fatal(err)
		}
	}
	return response{status, raw}, out.Data
}

// appendRaw sends an append call with a bearer token.
func (e *env) appendRaw(bearer string, body any) response {
	e.t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		e.t.Fatal(err)
	}
	header := map[string]string{"Content-Type": "application/json"}
	if bearer != "" {
		header["Authorization"] = "Bearer " + bearer
	}
	status, out := servicetest.NewClient(e.t, e.app, e.keys).Do("POST", contracts.EventsAppendPath, "", raw, header)
	return response{status, out}
}

// appendOK appends events and returns the result.
func (e *env) appendOK(events ...contracts.EventRecord) contracts.EventAppendResult {
	e.t.Helper()
	r := e.appendRaw(token, contracts.EventAppend{Source: "orders", Events: events})
	if r.status != 200 {
		e.t.Fatalf("append: %d %s", r.status, r.body)
	}
	var out struct {
		Data contracts.EventAppendResult `json:"data"`
	}
	if err := json.Unmarshal(r.body, &out); err != nil {
		e.t.Fatal(err)
	}
	return out.Data
}

const idChars = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// newID is a fresh event id.
func newID() string {
	b := make([]byte, 26)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = idChars[int(b[i])%len(idChars)]
	}
	return "evt_" + string(b)
}

// ev is an event of type typ for restaurant r.
func ev(r, typ string) contracts.EventRecord {
	id := newID()
	return contracts.EventRecord{ID: id, Type: typ, RestaurantID: r, OccurredAt: time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC),
		Data: json.RawMessage(fmt.Sprintf(`{"ref":%q}`, id))}
}

// testSecrets is a key ring sealing webhook secrets, as WEBHOOK_SECRET_KEYS.
func testSecrets(t testing.TB) *sealed.Keyring {
	k, err := sealed.Parse("t1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	return k
}
