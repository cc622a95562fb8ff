package delivery_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/pkg/webhooksig"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/events/internal/delivery"
	"partnerapi.dev/services/events/internal/domain"
	"partnerapi.dev/services/events/internal/sealed"
	"partnerapi.dev/services/events/internal/store"
	"partnerapi.dev/services/events/migrations"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	restA  = "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a01"
	restB  = "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a02"
	client = "client-1"
	grant  = "grant-1"
)

// received is one request the receiver got.
type received struct {
	header http.Header
	body   []byte
}

// receiver is a partner's endpoint on loopback: it records every request
// and answers what next says.
type receiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	got  []received
	next func(n int) (int, http.Header)
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{next: func(int) (int, http.Header) { return 204, nil }}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{req.Header.Clone(), b})
		n := len(r.got)
		f := r.next
		r.mu.Unlock()
		code, h := f(n)
		for k, v := range h {
			w.Header()[k] = v
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// identity answers grant lookups as identity does, with a grant the test
// changes.
type identity struct {
	mu    sync.Mutex
	grant contracts.Grant
}

func (i *identity) set(f func(g *contracts.Grant)) {
	i.mu.Lock()
	f(&i.grant)
	i.mu.Unlock()
}

type env struct {
	t      testing.TB
	store  *store.Store
	worker *delivery.Worker
	id     *identity
	keys   *internalctx.Keyring
	mu     sync.Mutex
	clock  time.Time
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

func newEnv(t testing.TB) *env {
	u := testenv.NewDatabase(t, "events", database.MigrateURL("events", migrations.FS, migrations.Go()...))
	ctx := context.Background()
	db, err := database.Open(ctx, database.Config{URL: config.Secret(u)}, "events")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(ctx) })
	keys, err := internalctx.ParseKeys("k1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, keys: keys, clock: time.Now().UTC().Truncate(time.Second)}
	e.id = &identity{grant: contracts.Grant{GrantID: grant, ClientID: client, ClientStatus: "approved", Status: "active",
		ExpiresAt: e.clock.Add(365 * 24 * time.Hour), Scopes: []string{contracts.ScopeRestaurantRead, contracts.ScopeOrdersRead},
		Boundary: "restaurant", Restaurants: []contracts.GrantRestaurant{{RestaurantID: restA}, {RestaurantID: restB}}}}
	idSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ic, err := keys.Verify(r.Header.Get(internalctx.Header))
		if err != nil || r.URL.Path != "/internal/v1/grants/"+grant || ic.GrantID != grant {
			http.NotFound(w, r)
			return
		}
		e.id.mu.Lock()
		defer e.id.mu.Unlock()
		_ = json.NewEncoder(w).Encode(e.id.grant)
	}))
	t.Cleanup(idSrv.Close)
	e.store = &store.Store{DB: db.Gorm, Now: e.now, Secrets: testSecrets(t)}
	e.worker = &delivery.Worker{Repo: e.store, Client: delivery.Client(true), Now: e.now, Rand: func() float64 { return 0.5 },
		Grants: &delivery.Grants{IdentityURL: idSrv.URL, Keys: keys, Client: idSrv.Client()}, Parallel: 4}
	return e
}

// endpoint creates an endpoint of restA for url subscribed to types.
func (e *env) endpoint(url string, types ...string) domain.Endpoint {
	e.t.Helper()
	id := uuid()
	ep := domain.Endpoint{ID: id, RestaurantID: restA, ClientID: client, GrantID: grant, URL: url, EventTypes: types,
		Secret: webhooksig.NewSecret(), CreatedAt: e.now(), UpdatedAt: e.now()}
	e.write(func(tx domain.WebhookTx) error { return tx.CreateEndpoint(ep) })
	return ep
}

func (e *env) write(fn func(tx domain.WebhookTx) error) {
	e.t.Helper()
	_, err := e.store.WriteWebhooks(context.Background(), domain.WriteKey{Scope: "test", Key: uuid(), Body: map[string]string{}},
		func(tx domain.WebhookTx) (int, any, error) { return 200, map[string]bool{"replayed": false}, fn(tx) })
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) appendEvents(events ...contracts.EventRecord) {
	e.t.Helper()
	if _, err := e.store.Append(context.Background(), "orders", events); err != nil {
		e.t.Fatal(err)
	}
}

// run makes the worker send what is due now and answers how many it took.
func (e *env) run() int {
	e.t.Helper()
	n, err := e.worker.RunOnce(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *env) deliveries(ep domain.Endpoint) []domain.Delivery {
	e.t.Helper()
	d, err := e.store.Deliveries(context.Background(), ep.ID, 0, 100)
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

func (e *env) readEndpoint(ep domain.Endpoint) domain.Endpoint {
	e.t.Helper()
	got, err := e.store.Endpoint(context.Background(), domain.Owner{ClientID: client, RestaurantID: restA}, ep.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

func uuid() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

const idChars = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

func ev(r, typ string) contracts.EventRecord {
	b := make([]byte, 26)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = idChars[int(b[i])%len(idChars)]
	}
	id := "evt_" + string(b)
	return contracts.EventRecord{ID: id, Type: typ, RestaurantID: r, OccurredAt: time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC),
		Data: json.RawMessage(fmt.Sprintf(`{"ref":%q}`, id))}
}

func TestDeliversSignedEventsToSubscribedEndpoints(t *testing.T) {
	e := newEnv(t)
	rcv := newReceiver(t)
	orders := e.endpoint(rcv.srv.URL+"/orders", contracts.EventOrderCreated, contracts.EventOrderUpdated)
	menus := e.endpoint(rcv.srv.URL+"/menus", contracts.EventMenuCreated)
	off := e.endpoint(rcv.srv.URL+"/off", contracts.EventOrderCreated)
	e.write(func(tx domain.WebhookTx) error {
		o, err := tx.LockEndpoint(domain.Owner{ClientID: client, RestaurantID: restA}, off.ID)
		o.Disabled = true
		if err != nil {
			return err
		}
		return tx.SaveEndpoint(o)
	})
	first, second, other := ev(restA, contracts.EventOrderCreated), ev(restA, contracts.EventOrderUpdated), ev(restB, contracts.EventOrderCreated)
	e.appendEvents(first, second, other, ev(restA, contracts.EventOrderRefunded))
	if n := e.run(); n != 2 {
		t.Fatalf("claimed %d deliveries, want the two of the orders endpoint", n)
	}
	got := rcv.requests()
	if len(got) != 2 {
		t.Fatalf("receiver got %d requests", len(got))
	}
	seen := map[string]int64{}
	for _, r := range got {
		if err := webhooksig.Verify(orders.Secret, r.header, r.body, time.Now()); err != nil {
			t.Fatalf("signature: %v", err)
		}
		var env domain.EventEnvelope
		if err := json.Unmarshal(r.body, &env); err != nil {
			t.Fatal(err)
		}
		if r.header.Get("webhook-id") != env.ID || env.RestaurantID != restA || !strings.Contains(string(env.Data), env.ID) {
			t.Fatalf("body %s with headers %v", r.body, r.header)
		}
		seen[env.ID] = env.Seq
	}
	if seen[first.ID] != 1 || seen[second.ID] != 2 {
		t.Fatalf("seqs %v", seen)
	}
	verifyWithStandardWebhooks(t, orders.Secret, got)
	for _, d := range e.deliveries(orders) {
		if d.Status != domain.StatusSucceeded || d.Attempts != 1 || d.LastStatus != 204 || d.NextAttemptAt != nil {
			t.Fatalf("delivery %+v", d)
		}
	}
	if n := len(e.deliveries(menus)) + len(e.deliveries(off)); n != 0 {
		t.Fatalf("%d deliveries to endpoints not subscribed or disabled", n)
	}
	if e.run() != 0 {
		t.Fatal("succeeded deliveries were claimed again")
	}
}

func TestFailuresRetryOnTheScheduleThenGiveUp(t *testing.T) {
	e := newEnv(t)
	rcv := newReceiver(t)
	rcv.next = func(int) (int, http.Header) { return 500, nil }
	ep := e.endpoint(rcv.srv.URL, contracts.EventOrderCreated)
	e.appendEvents(ev(restA, contracts.EventOrderCreated))
	if e.run() != 1 {
		t.Fatal("the first attempt is immediate")
	}
	for i, wait := range domain.RetrySchedule {
		e.advance(wait - time.Second)
		if n := e.run(); n != 0 {
			t.Fatalf("attempt %d ran a second before its time (%s)", i+2, wait)
		}
		e.advance(time.Second)
		if n := e.run(); n != 1 {
			t.Fatalf("attempt %d did not run %s after the previous", i+2, wait)
		}
	}
	d := e.deliveries(ep)[0]
	if d.Status != domain.StatusFailed || d.Attempts != 10 || d.LastStatus != 500 || len(rcv.requests()) != 10 {
		t.Fatalf("after the schedule: %+v, %d requests", d, len(rcv.requests()))
	}
	// The endpoint has failed for about 3.5 days: still enabled.
	if got := e.readEndpoint(ep); got.Disabled || got.FailingSince == nil {
		t.Fatalf("endpoint %+v", got)
	}
	// Failing on for 5 days disables it.
	e.advance(2 * 24 * time.Hour)
	e.appendEvents(ev(restA, contracts.EventOrderCreated))
	e.run()
	if got := e.readEndpoint(ep); !got.Disabled || !strings.Contains(got.DisabledReason, "5 days") {
		t.Fatalf("endpoint after 5 days of failures: %+v", got)
	}
}

func TestJitterStaysWithinTenPercent(t *testing.T) {
	now := time.Now()
	for i, base := range domain.RetrySchedule {
		for _, r := range []float64{0, 0.999999} {
			next, ok := domain.NextAttempt(now, i+1, 0, r)
			d := next.Sub(now)
			if !ok || d < base*9/10 || d > base*11/10 {
				t.Fatalf("attempt %d, rnd %v: wait %s for %s", i+2, r, d, base)
			}
		}
	}
	if _, ok := domain.NextAttempt(now, len(domain.RetrySchedule)+1, 0, 0.5); ok {
		t.Fatal("an attempt after the tenth")
	}
}

func TestGoneDisablesTheEndpoint(t *testing.T) {
	e := newEnv(t)
	rcv := newReceiver(t)
	rcv.next = func(int) (int, http.Header) { return 410, nil }
	ep := e.endpoint(rcv.srv.URL, contracts.EventOrderCreated)
	e.appendEvents(ev(restA, contracts.EventOrderCreated), ev(restA, contracts.EventOrderCreated))
	e.worker.Parallel = 1
	e.run()
	got := e.readEndpoint(ep)
	if !got.Disabled || !strings.Contains(got.DisabledReason, "410") {
		t.Fatalf("endpoint %+v", got)
	}
	for _, d := range e.deliveries(ep) {
		if d.Status != domain.StatusFailed {
			t.Fatalf("delivery %+v", d)
		}
	}
	e.appendEvents(ev(restA, contracts.EventOrderCreated))
	if e.run() != 0 || len(rcv.requests()) != 1 {
		t.Fatalf("a disabled endpoint got %d requests", len(rcv.requests()))
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	e := newEnv(t)
	rcv := newReceiver(t)
	rcv.next = func(n int) (int, http.Header) {
		if n == 1 {
			return 503, http.Header{"Retry-After": {"120"}}
		}
		return 200, nil
	}
	ep := e.endpoint(rcv.srv.URL, contracts.EventOrderCreated)
	e.appendEvents(ev(restA, contracts.EventOrderCreated))
	e.run()
	e.advance(119 * time.Second)
	if e.run() != 0 {
		t.Fatal("retried before Retry-After")
	}
	e.advance(time.Second)
	if e.run() != 1 {
		t.Fatal("not retried after Retry-After")
	}
	if d := e.deliveries(ep)[0]; d.Status != domain.StatusSucceeded || d.Attempts != 2 {
		t.Fatalf("delivery %+v", d)
	}
}

func TestReplayRedelivers(t *testing.T) {
	e := newEnv(t)
	rcv := newReceiver(t)
	ep := e.endpoint(rcv.srv.URL, contracts.EventOrderCreated)
	evs := []contracts.EventRecord{ev(restA, contracts.EventOrderCreated), ev(restA, contracts.EventOrderUpdated), ev(restA, contracts.EventOrderCreated), ev(restA, contracts.EventOrderCreated)}
	e.appendEvents(evs...)
	e.run()
	var res domain.ReplayResult
	e.write(func(tx domain.WebhookTx) error {
		var err error
		res, err = tx.Replay(ep, domain.ReplayFrom{AfterSeq: 1}, e.now())
		return err
	})
	if res.Enqueued != 2 || res.LastSeq != 4 || res.HasMore {
		t.Fatalf("replay %+v", res)
	}
	e.run()
	got := rcv.requests()
	var ids []string
	for _, r := range got {
		ids = append(ids, r.header.Get("webhook-id"))
	}
	want := []string{evs[0].ID, evs[2].ID, evs[3].ID, evs[2].ID, evs[3].ID}
	if len(ids) != len(want) {
		t.Fatalf("ids %v", ids)
	}
	for _, w := range want[3:] {
		if !strings.Contains(strings.Join(ids[3:], " "), w) {
			t.Fatalf("replay sent %v, want %v", ids[3:], want[3:])
		}
	}
	// A replay from a time picks by when the events happened.
	e.write(func(tx domain.WebhookTx) error {
		var err error
		res, err = tx.Replay(ep, domain.ReplayFrom{Since: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)}, e.now())
		return err
	})
	if res.Enqueued != 3 {
		t.Fatalf("replay since a time: %+v", res)
	}
}

func TestRotationSignsWithBothSecretsDuringGrace(t *testing.T) {
	e := newEnv(t)
	rcv := newReceiver(t)
	ep := e.endpoint(rcv.srv.URL, contracts.EventOrderCreated)
	old := ep.Secret
	next := webhooksig.NewSecret()
	e.write(func(tx domain.WebhookTx) error {
		cur, err := tx.LockEndpoint(domain.Owner{ClientID: client, RestaurantID: restA}, ep.ID)
		if err != nil {
			return err
		}
		cur.PreviousSecret, cur.PreviousUntil, cur.Secret = cur.Secret, e.now().Add(domain.RotationGrace), next
		return tx.SaveEndpoint(cur)
	})
	e.appendEvents(ev(restA, contracts.EventOrderCreated))
	e.run()
	e.advance(domain.RotationGrace)
	e.appendEvents(ev(restA, contracts.EventOrderCreated))
	e.run()
	got := rcv.requests()
	if len(got) != 2 {
		t.Fatalf("%d requests", len(got))
	}
	if n := len(strings.Fields(got[0].header.Get("webhook-signature"))); n != 2 {
		t.Fatalf("%d signatures during the grace period", n)
	}
	if n := len(strings.Fields(got[1].header.Get("webhook-signature"))); n != 1 {
		t.Fatalf("%d signatures after the grace period", n)
	}
	ts0, _ := strconv.ParseInt(got[0].header.Get("webhook-timestamp"), 10, 64)
	ts1, _ := strconv.ParseInt(got[1].header.Get("webhook-timestamp"), 10, 64)
	for _, c := range []struct {
		secret string
		r      received
		at     int64
		ok     bool
	}{{old, got[0], ts0, true}, {next, got[0], ts0, true}, {next, got[1], ts1, true}, {old, got[1], ts1, false}} {
		if err := webhooksig.Verify(c.secret, c.r.header, c.r.body, time.Unix(c.at, 0)); (err == nil) != c.ok {
			t.Fatalf("verify: %v, want ok=%v", err, c.ok)
		}
	}
	verifyWithStandardWebhooks(t, old, got[:1])
	verifyWithStandardWebhooks(t, next, got)
}

func TestGrantStateStopsDelivery(t *testing.T) {
	cases := []struct {
		name   string
		change func(g *contracts.Grant)
		typ    string
		why    string
	}{
		{"revoked", func(g *contracts.Grant) { g.Status = "revoked" }, contracts.EventOrderCreated, "revoked"},
		{"expired", func(g *contracts.Grant) { g.ExpiresAt = time.Now().Add(-time.Minute) }, contracts.EventOrderCreated, "expired"},
		{"restaurant no longer covered", func(g *contracts.Grant) { g.Restaurants = g.Restaurants[1:] }, contracts.EventOrderCreated, "no longer covers"},
		{"scope withdrawn", func(g *contracts.Grant) { g.Scopes = g.Scopes[:1] }, contracts.EventOrderCreated, "scopes"},
		{"client suspended", func(g *contracts.Grant) { g.ClientStatus = "suspended" }, contracts.EventOrderCreated, "no longer approved"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			rcv := newReceiver(t)
			ep := e.endpoint(rcv.srv.URL, c.typ)
			e.id.set(c.change)
			e.appendEvents(ev(restA, c.typ))
			e.run()
			if len(rcv.requests()) != 0 {
				t.Fatal("delivered under a grant that no longer allows it")
			}
			d := e.deliveries(ep)[0]
			if d.Status != domain.StatusBlocked || d.Attempts != 0 || !strings.Contains(d.LastError, c.why) {
				t.Fatalf("delivery %+v", d)
			}
		})
	}
}

func TestClientRefusesPrivateAddressesAndRedirects(t *testing.T) {
	strict := delivery.Client(false)
	for _, u := range []string{"http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/", "http://127.0.0.1:1/",
		"http://[::1]:1/", "http://100.64.0.1/", "http://192.168.1.1/", "http://[fd00:ec2::254]/", "http://[::ffff:10.0.0.1]/"} {
		resp, err := strict.Get(u)
		if err == nil {
			resp.Body.Close()
		}
		if !errors.Is(err, delivery.ErrBlockedAddress) {
			t.Errorf("%s: %v, want refused", u, err)
		}
	}
	// A name resolving to loopback is refused too: the check is on the
	// address dialled, not on the URL.
	if _, err := strict.Get("http://localhost:1/"); !errors.Is(err, delivery.ErrBlockedAddress) {
		t.Errorf("localhost: %v", err)
	}
	target := newReceiver(t)
	redirect := httptest.NewServer(http.RedirectHandler(target.srv.URL, http.StatusFound))
	defer redirect.Close()
	resp, err := delivery.Client(true).Post(redirect.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || len(target.requests()) != 0 {
		t.Fatalf("redirect followed: %d, target got %d", resp.StatusCode, len(target.requests()))
	}
}

// verifyWithStandardWebhooks checks the requests with the standardwebhooks
// npm package (tools/webhookverify), an implementation we did not write.
func verifyWithStandardWebhooks(t *testing.T, secret string, got []received) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Log("node is not installed: the standardwebhooks check is skipped")
		return
	}
	dir := filepath.Join("..", "..", "..", "..", "tools", "webhookverify")
	installNodeModules(t, dir)
	var in bytes.Buffer
	for _, r := range got {
		ts, _ := strconv.ParseInt(r.header.Get("webhook-timestamp"), 10, 64)
		line, _ := json.Marshal(map[string]any{"secret": secret, "body": string(r.body), "now": ts, "headers": map[string]string{
			"webhook-id": r.header.Get("webhook-id"), "webhook-timestamp": r.header.Get("webhook-timestamp"),
			"webhook-signature": r.header.Get("webhook-signature")}})
		in.Write(append(line, '\n'))
	}
	cmd := exec.Command("node", "verify.mjs")
	cmd.Dir, cmd.Stdin = dir, &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node verify.mjs: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(got) {
		t.Fatalf("verify.mjs: %s", out)
	}
	for i, l := range lines {
		if l != "ok" {
			t.Fatalf("standardwebhooks refuses request %d: %s", i, l)
		}
	}
}

func installNodeModules(t *testing.T, dir string) {
	t.Helper()
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(lock)
	want := []byte(hex.EncodeToString(sum[:]))
	stamp := filepath.Join(dir, "node_modules", ".installed-from-lock")
	if got, err := os.ReadFile(stamp); err == nil && bytes.Equal(got, want) {
		return
	}
	cmd := exec.Command("npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci: %v\n%s", err, out)
	}
	if err := os.WriteFile(stamp, want, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Zoned link-local and IPv4-embedded IPv6 addresses are refused when
// dialled, like the plain ranges.
func TestClientRefusesZonedAndEmbeddedAddresses(t *testing.T) {
	strict := delivery.Client(false)
	for _, u := range []string{"http://[fe80::1%25lo]:1/", "http://[::127.0.0.1]:1/", "http://[::a00:1]:1/", "http://[64:ff9b::7f00:1]:1/",
		"http://[2002:7f00:1::1]:1/", "http://[2001::1]:1/", "http://[fec0::1]:1/", "http://[64:ff9b:1::1]:1/"} {
		resp, err := strict.Get(u)
		if err == nil {
			resp.Body.Close()
		}
		if !errors.Is(err, delivery.ErrBlockedAddress) {
			t.Errorf("%s: %v, want refused", u, err)
		}
	}
}

// lastError says what kind of failure an attempt met, never an address,
// a port or the resolver's answer.
func TestLastErrorNamesTheFailureNotTheAddress(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	reset := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = c.Close()
		}
	}))
	defer reset.Close()
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	defer tlsSrv.Close()
	for _, c := range []struct {
		name, url, want string
		loopback        bool
	}{
		{"refused", closedURL, delivery.ErrTextRefused, true},
		{"reset", reset.URL, delivery.ErrTextReset, true},
		{"tls", tlsSrv.URL, delivery.ErrTextTLS, true},
		{"not allowed", reset.URL, delivery.ErrTextNotAllowed, false},
		{"not resolved", "http://no-such-host.invalid:1/", delivery.ErrTextDNS, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.worker.Client = delivery.Client(c.loopback)
			ep := e.endpoint(c.url, contracts.EventOrderCreated)
			e.appendEvents(ev(restA, contracts.EventOrderCreated))
			e.run()
			d := e.deliveries(ep)[0]
			if d.LastError != c.want || strings.Contains(d.LastError, "127.0.0.1") || strings.Contains(d.LastError, "::1") {
				t.Fatalf("lastError %q, want %q", d.LastError, c.want)
			}
			for _, part := range strings.FieldsFunc(c.url, func(r rune) bool { return r == ':' || r == '/' }) {
				if len(part) > 2 && part != "http" && part != "https" && strings.Contains(d.LastError, part) {
					t.Fatalf("lastError %q shows %q", d.LastError, part)
				}
			}
		})
	}
}

// An endpoint that hangs with a long queue holds at most its share of the
// worker's slots, and another endpoint's delivery, queued behind that
// backlog, arrives while it still hangs.
func TestHangingEndpointDoesNotDelayOthers(t *testing.T) {
	e := newEnv(t)
	e.worker.Parallel = 8
	release := make(chan struct{})
	var mu sync.Mutex
	hanging, most := 0, 0
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hanging++
		most = max(most, hanging)
		mu.Unlock()
		select {
		case <-release:
		case <-r.Context().Done():
		}
		mu.Lock()
		hanging--
		mu.Unlock()
	}))
	fast := newReceiver(t)
	e.endpoint(slow.URL, contracts.EventOrderCreated)
	var backlog []contracts.EventRecord
	for range 100 {
		backlog = append(backlog, ev(restA, contracts.EventOrderCreated))
	}
	e.appendEvents(backlog...)
	e.endpoint(fast.srv.URL, contracts.EventOrderUpdated)
	e.appendEvents(ev(restA, contracts.EventOrderUpdated))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.worker.Run(ctx, 10*time.Millisecond); close(done) }()
	defer func() { close(release); cancel(); <-done; slow.Close() }()
	// The slow endpoint answers nothing until the test ends: the fast
	// endpoint's delivery can only arrive beside it.
	deadline := time.Now().Add(10 * time.Second)
	for len(fast.requests()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the other endpoint's delivery did not arrive while the slow endpoint hung")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The slow endpoint's requests arrive too and stay unanswered: no more
	// than its share of the slots at once (4 is domain.DefaultPerEndpoint,
	// half of the 8), however long its queue.
	for {
		mu.Lock()
		n := hanging
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow endpoint got nothing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if most > 4 {
		t.Fatalf("the hanging endpoint held %d slots at once, want at most 4", most)
	}
}

// Under menu naming set B a menu event's webhook body uses set-B names,
// and the signature covers the body as sent.
func TestWebhookBodyFollowsTheMenuNamingSet(t *testing.T) {
	e := newEnv(t)
	e.id.set(func(g *contracts.Grant) { g.Scopes = append(g.Scopes, contracts.ScopeMenuRead) })
	e.worker.NamingSet = "B"
	rcv := newReceiver(t)
	ep := e.endpoint(rcv.srv.URL, contracts.EventMenuPublished)
	x := ev(restA, contracts.EventMenuPublished)
	x.Data = json.RawMessage(`{"menu":{"menuId":"6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b","name":"Lunch","isPosMenu":true,"isOnlineMenu":false,"categoryCount":2,"itemCount":7},"publication":"pos","replacedMenuId":null}`)
	e.appendEvents(x)
	e.run()
	got := rcv.requests()
	if len(got) != 1 {
		t.Fatalf("%d requests", len(got))
	}
	body := string(got[0].body)
	if !strings.Contains(body, `"menuPublicId":"6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"`) || !strings.Contains(body, `"activeForPos":true`) ||
		!strings.Contains(body, `"onlineOrdering":false`) || strings.Contains(body, `"menuId"`) || strings.Contains(body, `"isPosMenu"`) {
		t.Fatalf("body %s", body)
	}
	if err := webhooksig.Verify(ep.Secret, got[0].header, got[0].body, e.now()); err != nil {
		t.Fatal(err)
	}
}

// testSecrets is a key ring sealing webhook secrets, as WEBHOOK_SECRET_KEYS.
func testSecrets(t testing.TB) *sealed.Keyring {
	k, err := sealed.Parse("t1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	return k
}
