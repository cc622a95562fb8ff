// Package servicetest is the one harness of the services' API tests: a
// service built on a database cloned for the test (pkg/testenv), requests
// carrying the internal context the gateway signs, every partner answer
// checked against the OpenAPI document, and answers decoded into typed
// values.
package servicetest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/lifecycle"
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/pkg/testenv"
)

// KeySpec is the INTERNAL_CONTEXT_KEYS the tests give a service; Keys is
// the key ring it parses to.
var KeySpec = "k1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))

// CursorKey is the CURSOR_KEY the tests give a service that pages.
var CursorKey = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32))

// Keys is the key ring of KeySpec.
func Keys(t testing.TB) *internalctx.Keyring {
	t.Helper()
	k, err := internalctx.ParseKeys(KeySpec)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Open opens the database of cfg for schema and its reads (the replica's
// when cfg names one); both close when the test ends.
func Open(t testing.TB, cfg database.Config, schema string) (*database.DB, *database.Reads) {
	t.Helper()
	ctx := context.Background()
	db, err := database.Open(ctx, cfg, schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(ctx) })
	reads, err := database.OpenReads(ctx, cfg, schema, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reads.Close(ctx) })
	return db, reads
}

// ReplicaDatabase starts a Postgres server of the test's own with a
// streaming replica, migrates the primary with migrate and returns the
// configuration that writes to the primary and reads from the replica.
func ReplicaDatabase(t testing.TB, migrate testenv.MigrateFunc) database.Config {
	t.Helper()
	primary, replica := testenv.PostgresWithReplica(t)
	if err := migrate(context.Background(), primary); err != nil {
		t.Fatal(err)
	}
	return database.Config{URL: config.Secret(primary), ReadURL: config.Secret(replica), ReadWait: 50 * time.Millisecond}
}

// PauseReplay stops the replica of reads replaying what the primary
// commits, as a lagging replica does.
func PauseReplay(t testing.TB, reads *database.Reads) {
	t.Helper()
	if err := reads.Replica().Gorm.Exec(`SELECT pg_wal_replay_pause()`).Error; err != nil {
		t.Fatal(err)
	}
}

// ResumeReplay lets the replica of reads replay again and waits until it
// has caught up with the primary (CaughtUp waits without resuming).
func ResumeReplay(t testing.TB, reads *database.Reads) {
	t.Helper()
	if err := reads.Replica().Gorm.Exec(`SELECT pg_wal_replay_resume()`).Error; err != nil {
		t.Fatal(err)
	}
	CaughtUp(t, reads)
}

// CaughtUp waits until the replica of reads has replayed what the primary
// had committed.
func CaughtUp(t testing.TB, reads *database.Reads) {
	t.Helper()
	if err := reads.WaitReplica(context.Background(), 10*time.Second); err != nil {
		t.Fatal(err)
	}
}

// Serve loads a service's serve configuration from vars (KeySpec added as
// INTERNAL_CONTEXT_KEYS) into cfg and builds the service on p with build,
// as its main does; what the server started stops when the test ends.
func Serve[C service.Serving](t testing.TB, cfg C, vars map[string]string, p service.Process,
	build func(context.Context, C, service.Process) (*service.Server, error)) *service.Server {
	t.Helper()
	ctx := context.Background()
	env := map[string]string{"INTERNAL_CONTEXT_KEYS": KeySpec}
	for k, v := range vars {
		env[k] = v
	}
	if err := config.LoadMap(ctx, cfg, env); err != nil {
		t.Fatal(err)
	}
	srv, err := build(ctx, cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lifecycle.Close(ctx, srv.Closers...) })
	return srv
}

// Tenant is the restaurant the tests use unless a Client names another:
// Helsinki's business day, euros.
func Tenant(id string) internalctx.Tenant {
	return internalctx.Tenant{ID: id, TimeZone: "Europe/Helsinki", DayStartHour: 4, Currency: "EUR", Country: "FI"}
}

// Client sends requests to a service's app as the gateway does. Its fields
// say what the gateway signs; tests change them between requests.
type Client struct {
	t    testing.TB
	app  *fiber.App
	keys *internalctx.Keyring

	// ClientID, UserID and Scopes are the grant's.
	ClientID string
	UserID   string
	Scopes   []string
	// Tenants are the restaurants by id; one not listed is Tenant(id).
	Tenants map[string]internalctx.Tenant
	// NamingB checks answers against the naming set B document.
	NamingB bool
	// Unchecked skips the document check: for a path the document does not
	// list (a 404 expected), or a benchmark measuring the service alone.
	Unchecked bool
	// Timeout bounds one request (30 s unless set).
	Timeout time.Duration
}

// NewClient is a client of app signing with keys as client "client-1" for
// user "u".
func NewClient(t testing.TB, app *fiber.App, keys *internalctx.Keyring, scopes ...string) *Client {
	return &Client{t: t, app: app, keys: keys, ClientID: "client-1", UserID: "u", Scopes: scopes}
}

// Use makes t the test the client reports to: a fuzz target's, whose
// tests are not the one that built the client.
func (c *Client) Use(t testing.TB) { c.t = t }

// Signed is the internal context the gateway sends for tenant.
func (c *Client) Signed(tenant string) string {
	ten, ok := c.Tenants[tenant]
	if !ok {
		ten = Tenant(tenant)
	}
	return c.keys.Sign(internalctx.Context{ClientID: c.ClientID, UserID: c.UserID, GrantID: "g",
		Scopes: c.Scopes, Tenant: &ten, RequestID: "req-1"})
}

// Do sends a request and returns the answer's status and body. tenant ""
// sends no internal context. body is nil, a string or []byte sent as it
// is, an io.Reader, or a value sent as JSON; with a body and no header the
// request says it is JSON, otherwise header is the request's. Every answer
// on a partner path (/v1/) is checked against the OpenAPI document
// (RateLimit-Policy is the gateway's, added at the edge).
func (c *Client) Do(method, path, tenant string, body any, header map[string]string) (int, []byte) {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	case io.Reader:
		rd = b
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, rd)
	if rd != nil && header == nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if tenant != "" {
		req.Header.Set(internalctx.Header, c.Signed(tenant))
	}
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	resp, err := c.app.Test(req, int(timeout.Milliseconds()))
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	if strings.HasPrefix(path, "/v1/") && !c.Unchecked {
		u, _ := url.Parse(path)
		h := resp.Header.Clone()
		h.Set("RateLimit-Policy", `"partner";q=60;w=60`)
		if c.NamingB {
			apispec.ValidateResponseSetB(c.t, method, u.Path, u.Query(), resp.StatusCode, h, raw)
		} else {
			apispec.ValidateResponse(c.t, method, u.Path, u.Query(), resp.StatusCode, h, raw)
		}
	}
	return resp.StatusCode, raw
}

// Ingest posts an NDJSON body to an internal ingestion path with the
// ingestion token as bearer.
func (c *Client) Ingest(path, token, ndjson string) (int, []byte) {
	c.t.Helper()
	return c.Do(http.MethodPost, path, "", ndjson,
		map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/x-ndjson"})
}

// NDJSON is values as one JSON document a line.
func NDJSON[T any](t testing.TB, values ...T) string {
	t.Helper()
	var b strings.Builder
	for _, v := range values {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(raw)
		b.WriteByte('\n')
	}
	return b.String()
}

// Answer is a decoded answer: Data of a successful one, the error envelope
// of a refused one.
type Answer[T any] struct {
	Status int
	Data   T
	httpx.Envelope
	// Raw is the body as it came.
	Raw []byte
}

// Decode decodes a JSON answer; t fails when the body is not JSON.
func Decode[T any](t testing.TB, status int, raw []byte) Answer[T] {
	t.Helper()
	var body struct {
		Data T `json:"data"`
		httpx.Envelope
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("answer %d is not the JSON expected: %v: %s", status, err, raw)
	}
	return Answer[T]{Status: status, Data: body.Data, Envelope: body.Envelope, Raw: raw}
}

// Call is c.Do decoding the answer.
func Call[T any](c *Client, method, path, tenant string, body any) Answer[T] {
	c.t.Helper()
	status, raw := c.Do(method, path, tenant, body, nil)
	return Decode[T](c.t, status, raw)
}

// Must is Call expecting status want, returning the answer's data.
func Must[T any](c *Client, want int, method, path, tenant string, body any) T {
	c.t.Helper()
	a := Call[T](c, method, path, tenant, body)
	if a.Status != want {
		c.t.Fatalf("%s %s: %d, want %d: %s", method, path, a.Status, want, a.Raw)
	}
	return a.Data
}

// Refused is Call expecting the error status want, returning the answer's
// "error: message".
func Refused(c *Client, want int, method, path, tenant string, body any) string {
	c.t.Helper()
	a := Call[json.RawMessage](c, method, path, tenant, body)
	if a.Status != want {
		c.t.Fatalf("%s %s: %d, want %d: %s", method, path, a.Status, want, a.Raw)
	}
	if a.Error == "" {
		c.t.Fatalf("%s %s: %d without an error code: %s", method, path, a.Status, a.Raw)
	}
	return a.Error + ": " + a.Message
}

// Strict decodes raw as a T, failing t on a field T does not declare: two
// values decoded with it and compared as Ts are compared whole.
func Strict[T any](t testing.TB, raw []byte) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return v
}
