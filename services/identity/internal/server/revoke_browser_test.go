package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/outbox"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/contracts/eventsclient"
	idconfig "partnerapi.dev/services/identity/internal/config"
)

const (
	eventsToken      = "test-events-token-0123456789"
	webhookSecretKey = "w1:AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="
)

// eventsService is the events service's own binary (services/events),
// migrated into a database of its own and serving on loopback: the real
// log, feed, webhook worker and connected-apps answers.
type eventsService struct {
	url string
}

// buildEvents builds services/events' command into dir (skipping the test
// in a checkout without it: identity builds and tests on its own).
func buildEvents(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join("..", "..", "..", "events")
	if _, err := os.Stat(filepath.Join(src, "go.mod")); err != nil {
		t.Skip("services/events is not in this checkout")
	}
	testenv.Sources(t)
	bin := filepath.Join(dir, "events")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/events")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the events service: %v\n%s", err, out)
	}
	return bin
}

// startEvents migrates a fresh database with the events binary and serves
// it at addr, asking identity (identityURL) for grants.
func startEvents(t *testing.T, bin, addr, identityURL string) *eventsService {
	t.Helper()
	env := func(extra ...string) []string {
		return append(append(os.Environ(), "LOG_LEVEL=warn", "INTERNAL_CONTEXT_KEYS="+ctxKeys, "EVENTS_TOKEN="+eventsToken,
			"WEBHOOK_SECRET_KEYS="+webhookSecretKey), extra...)
	}
	db := testenv.NewDatabase(t, "events-binary", func(ctx context.Context, url string) error {
		cmd := exec.CommandContext(ctx, bin, "migrate")
		cmd.Env = env("DATABASE_URL=" + url)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		return nil
	})
	var logs bytes.Buffer
	cmd := exec.Command(bin, "serve")
	cmd.Env = env("DATABASE_URL="+db, "HTTP_ADDR="+addr, "INTERNAL_HTTP_ADDR="+testenv.FreeAddr(t), "IDENTITY_URL="+identityURL,
		"WEBHOOKS_ALLOW_LOOPBACK=true")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("events service output:\n%s", logs.String())
		}
	})
	s := &eventsService{url: "http://" + addr}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(s.url + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the events service is not ready:\n%s", logs.String())
		}
	}
}

// send calls the events service; ic, when set, is the gateway's signed
// context of a partner request.
func (s *eventsService) send(t *testing.T, method, path string, ic *internalctx.Context, body, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, s.url+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if ic != nil {
		ring, _ := internalctx.ParseKeys(ctxKeys)
		req.Header.Set(internalctx.Header, ring.Sign(*ic))
	} else {
		req.Header.Set("Authorization", "Bearer "+eventsToken)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil {
		_ = json.Unmarshal(raw, out)
	}
	if resp.StatusCode/100 != 2 {
		t.Logf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode
}

// webhookReceiver is the partner's endpoint: it keeps the type of every
// event posted to it, in order.
type webhookReceiver struct {
	srv   *httptest.Server
	mu    sync.Mutex
	types []string
}

func newWebhookReceiver(t *testing.T) *webhookReceiver {
	r := &webhookReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var ev struct {
			Type string `json:"type"`
		}
		_ = json.NewDecoder(req.Body).Decode(&ev)
		r.mu.Lock()
		r.types = append(r.types, ev.Type)
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *webhookReceiver) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.types...)
}

// waitFor polls cond every 100 ms for up to 20 s; on time-out it shows
// the webhook deliveries.
func waitFor(t *testing.T, what string, cond func() bool, deliveries func() map[string]string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; deliveries %v", what, deliveries())
		}
	}
}

// TestBrowserRevokeStopsThePartner is the owner's whole story in headless
// Chromium against the real events service: the demo partner has made a
// few writes to Alpha Bistro and has a webhook endpoint there; the owner
// signs in, sees the partner with its scopes and its writes in words,
// revokes it; the partner's next call is refused (403, as the gateway
// answers a revoked authorization), its endpoint receives
// authorization.revoked and then nothing more, although the restaurant's
// log goes on. Screenshots are kept in the test's artifact directory.
//
// Stand-ins, and why: the gateway is not started, so this test signs its
// internal context for the partner's webhook-endpoint request (the
// gateway's own tests hold that it signs only what the token and grant
// allow), and the partner's writes are appended to the events service as
// the menus and orders relays append them (those services' tests hold that
// a partner write records its event with the request's actor).
func TestBrowserRevokeStopsThePartner(t *testing.T) {
	t.Parallel()
	chromium := testenv.Chromium(t)
	bin := buildEvents(t, t.TempDir())
	eventsAddr := testenv.FreeAddr(t)
	e := newEnv(t, func(c *idconfig.Config) {
		c.Events = eventsclient.Config{URL: "http://" + eventsAddr, Token: config.Secret(eventsToken)}
	})
	events := startEvents(t, bin, eventsAddr, e.base)
	ctx, stop := context.WithCancel(context.Background())
	relay := eventsclient.StartRelay(ctx, e.db.Gorm, e.cfg.Events, "identity")
	t.Cleanup(func() { stop(); _ = relay.Fn(context.Background()) })

	// The partner's authorization, its webhook endpoint and its writes.
	o := e.opts("demo-partner")
	o.Scope = contracts.ScopeRestaurantRead + " " + contracts.ScopeOrdersRead
	_, tok := e.approve(t, o)
	gid := grantID(t, tok.AccessToken)
	partnerCtx := &internalctx.Context{ClientID: "demo-partner", UserID: userOwner, GrantID: gid, RequestID: "req-webhooks",
		Scopes: []string{contracts.ScopeRestaurantRead, contracts.ScopeOrdersRead, contracts.ScopeWebhooksManage},
		Tenant: &internalctx.Tenant{ID: restA, TimeZone: "Europe/Helsinki", DayStartHour: 4, Currency: "EUR", Country: "FI"}}
	rcv := newWebhookReceiver(t)
	var created struct {
		Data struct {
			Endpoint struct {
				ID string `json:"id"`
			} `json:"endpoint"`
		} `json:"data"`
	}
	if st := events.send(t, http.MethodPost, "/v1/restaurants/"+restA+"/webhook-endpoints", partnerCtx,
		map[string]any{"url": rcv.srv.URL + "/webhooks", "eventTypes": []string{contracts.EventOrderCreated}, "idempotencyKey": uuid.NewString()}, &created); st != http.StatusCreated {
		t.Fatalf("create the webhook endpoint: %d", st)
	}
	actor := &contracts.EventActor{ClientID: "demo-partner", GrantID: gid, UserID: userOwner}
	write := func(typ string, data string, who *contracts.EventActor) {
		t.Helper()
		ev := contracts.EventRecord{ID: outbox.NewID(), Type: typ, RestaurantID: restA, OccurredAt: time.Now().UTC(), Data: json.RawMessage(data), Actor: who}
		if st := events.send(t, http.MethodPost, contracts.EventsAppendPath, nil, contracts.EventAppend{Source: "test", Events: []contracts.EventRecord{ev}}, nil); st != http.StatusOK {
			t.Fatalf("append %s: %d", typ, st)
		}
	}
	lunch := `{"menu":{"menuId":"6b0c1f4e-0000-4000-8000-000000000001","name":"Lunch","isPosMenu":false,"isOnlineMenu":false,"categoryCount":1,"itemCount":3}`
	write(contracts.EventMenuCreated, lunch+`}`, actor)
	write(contracts.EventMenuPublished, lunch+`,"publication":"pos","replacedMenuId":null}`, actor)
	write(contracts.EventOrderCreated, `{"orderId":"order-1"}`, actor)
	deliveries := func() map[string]string {
		var page struct {
			Data struct {
				Deliveries []struct {
					EventType, Status, LastError string
					Seq                          int64
				} `json:"deliveries"`
			} `json:"data"`
		}
		events.send(t, http.MethodGet, "/v1/restaurants/"+restA+"/webhook-endpoints/"+created.Data.Endpoint.ID+"/deliveries", partnerCtx, nil, &page)
		out := map[string]string{}
		for _, d := range page.Data.Deliveries {
			out[fmt.Sprintf("%d %s", d.Seq, d.EventType)] = d.Status + " " + d.LastError
		}
		return out
	}
	waitFor(t, "the order's webhook delivery", func() bool { return len(rcv.got()) == 1 }, deliveries)

	b := newTab(t, chromium, 90*time.Second, chromedp.WindowSize(900, 1400))
	b.do("sign in",
		chromedp.Navigate(e.base+"/account"),
		chromedp.WaitVisible(chromedp.CSS(`label[for="email"]`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), ownerEmail),
		chromedp.SendKeys(chromedp.CSS(`#password`), ownerPW),
		chromedp.Click(chromedp.Search(`//button[normalize-space()="Sign in"]`)),
		chromedp.WaitVisible(chromedp.Search(`//h1[normalize-space()="Connected apps"]`)))
	list := b.text()
	for _, want := range []string{"Demo Partner", "See the restaurant's name, business identity and settings", "Alpha Bistro",
		"Set “Lunch” as the POS menu at Alpha Bistro", "Created the menu “Lunch” at Alpha Bistro", "Created an order at Alpha Bistro",
		"approved by Olivia Owner", "127.0.0.1 (Alpha Bistro)"} {
		if !strings.Contains(list, want) {
			t.Errorf("connected apps page lacks %q:\n%s", want, list)
		}
	}
	b.shot("1-connected-apps-with-activity")

	b.do("open the confirmation",
		chromedp.Click(chromedp.CSS(`a[href="/account/authorizations/`+gid+`"]`)),
		chromedp.WaitVisible(chromedp.Search(`//h2[normalize-space()="What stops working"]`)))
	b.shot("2-confirm")
	b.do("revoke",
		chromedp.Click(chromedp.Search(`//button[normalize-space()="Revoke access"]`)),
		chromedp.WaitVisible(chromedp.Search(`//p[normalize-space()="Access revoked."]`)))
	b.shot("3-revoked")

	var view json.RawMessage
	if st := e.partner(t, "/v1/restaurants", gid, &view); st != http.StatusForbidden {
		t.Errorf("the partner's next call: %d %s, want 403", st, view)
	}
	// identity's outbox forwards the revocation; the endpoint gets it last.
	waitFor(t, "the authorization.revoked delivery", func() bool { return len(rcv.got()) == 2 }, deliveries)
	if got := rcv.got(); got[0] != contracts.EventOrderCreated || got[1] != contracts.EventAuthorizationRevoked {
		t.Fatalf("the endpoint received %v", got)
	}
	// The restaurant's log goes on (a POS order, an order by the revoked
	// grant's last request in flight): the endpoint receives none of it.
	write(contracts.EventOrderCreated, `{"orderId":"order-2"}`, nil)
	write(contracts.EventOrderCreated, `{"orderId":"order-3"}`, actor)
	waitFor(t, "the later deliveries to be blocked", func() bool {
		d := deliveries()
		return strings.HasPrefix(d["5 order.created"], "blocked The authorization was revoked") &&
			strings.HasPrefix(d["6 order.created"], "blocked The authorization was revoked")
	}, deliveries)
	if d := deliveries(); d["3 order.created"] != "succeeded " || d["4 authorization.revoked"] != "succeeded " {
		t.Errorf("deliveries %v", d)
	}
	if got := rcv.got(); len(got) != 2 {
		t.Fatalf("the endpoint received %v after the revocation", got)
	}
	t.Logf("screenshots in %s", t.ArtifactDir())
}
