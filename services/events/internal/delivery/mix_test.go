package delivery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/webhooksig"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/events/internal/api"
)

var (
	mixSeed     = flag.Uint64("mix.seed", 0, "seed of TestMixedEndpointOperations (0: a new one, printed)")
	mixDuration = flag.Duration("mix.duration", 3*time.Second, "how long TestMixedEndpointOperations runs")
)

// mixOp is one answered management call of the mixed run.
type mixOp struct {
	kind          string
	start, answer time.Time
	status        int
	// What the answer says the endpoint is (for create, update and rotate).
	url      string
	disabled bool
	// secret is the new secret of a create or rotate.
	secret string
}

// arrival is one request a receiver got, when it got it.
type arrival struct {
	at     time.Time
	addr   string
	header http.Header
	body   []byte
}

// mixRound is one endpoint's life: its receivers, its calls and what
// arrived.
type mixRound struct {
	mu       sync.Mutex
	ops      []mixOp
	arrivals []arrival
}

func (r *mixRound) receiver(t *testing.T, rnd *rand.Rand) string {
	delay := time.Duration(rnd.IntN(3)) * time.Millisecond
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		at := time.Now()
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.arrivals = append(r.arrivals, arrival{at: at, addr: srv.URL, header: req.Header.Clone(), body: b})
		r.mu.Unlock()
		time.Sleep(delay)
		w.WriteHeader(204)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestMixedEndpointOperations runs random interleavings of update (url,
// disabled), rotate, delete, replay and test on one endpoint from several
// workers while the worker delivers to one receiver per URL, and checks:
// once a delete, a disable or a URL change has been answered, nothing more
// arrives at the deleted, disabled or old address; every arrival is signed
// by at most the current secret and the one in its grace period.
// Replay a run with -mix.seed; run longer with -mix.duration.
func TestMixedEndpointOperations(t *testing.T) {
	seed := *mixSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("seed %d (replay with -mix.seed=%d)", seed, seed)
	e := newEnv(t)
	h := &api.Handlers{Repo: e.store, Webhooks: e.store, Keys: e.keys, Secrets: e.store.Secrets, AllowLoopbackHTTP: true, Now: e.now}
	app := h.App(nil)
	call := func(method, path string, body map[string]any) (int, map[string]any) {
		body["idempotencyKey"] = uuid()
		raw, _ := json.Marshal(body)
		req := httptest.NewRequest(method, path, bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(internalctx.Header, e.keys.Sign(internalctx.Context{ClientID: client, UserID: "u", GrantID: grant,
			Scopes: []string{contracts.ScopeRestaurantRead, contracts.ScopeOrdersRead, contracts.ScopeWebhooksManage},
			Tenant: &internalctx.Tenant{ID: restA, TimeZone: "Europe/Helsinki", DayStartHour: 4, Currency: "EUR", Country: "FI"}, RequestID: "r"}))
		resp, err := app.Test(req, 60_000)
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		var out struct {
			Data map[string]any `json:"data"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out.Data
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.worker.Parallel = 8
	done := make(chan struct{})
	go func() { e.worker.Run(ctx, 2*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()

	begin := time.Now()
	for round := uint64(0); round == 0 || time.Since(begin) < *mixDuration; round++ {
		rnd := rand.New(rand.NewPCG(seed, round))
		r := &mixRound{}
		urls := []string{r.receiver(t, rnd), r.receiver(t, rnd), r.receiver(t, rnd)}
		base := "/v1/restaurants/" + restA + "/webhook-endpoints"
		start := time.Now()
		code, d := call("POST", base, map[string]any{"url": urls[0], "eventTypes": []string{contracts.EventOrderCreated}})
		if code != 201 {
			t.Fatalf("seed %d: create: %d %v", seed, code, d)
		}
		id := d["endpoint"].(map[string]any)["id"].(string)
		r.ops = append(r.ops, mixOp{kind: "create", start: start, answer: time.Now(), status: code, url: urls[0], secret: d["secret"].(string)})
		evs := make([]contracts.EventRecord, 100)
		for i := range evs {
			evs[i] = ev(restA, contracts.EventOrderCreated)
		}
		e.appendEvents(evs...)

		var wg sync.WaitGroup
		stop := make(chan struct{})
		var once sync.Once
		for w := range 4 {
			wr := rand.New(rand.NewPCG(seed, round<<8|uint64(w+1)))
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 12; i++ {
					select {
					case <-stop:
						return
					case <-time.After(time.Duration(wr.IntN(30)) * time.Millisecond):
					}
					op := mixOp{start: time.Now()}
					var body map[string]any
					method, path := "PATCH", base+"/"+id
					switch n := wr.IntN(20); {
					case n < 6:
						op.kind, body = "url", map[string]any{"url": urls[wr.IntN(len(urls))]}
					case n < 9:
						op.kind, body = "disable", map[string]any{"disabled": true}
					case n < 12:
						op.kind, body = "enable", map[string]any{"disabled": false}
					case n < 15:
						method, path, op.kind = "POST", path+"/rotate-secret", "rotate"
						body = map[string]any{"gracePeriodSeconds": []int{0, 3600}[wr.IntN(2)]}
					case n < 17:
						method, path, op.kind, body = "POST", path+"/replay", "replay", map[string]any{"afterSeq": 0}
					case n < 19:
						method, path, op.kind, body = "POST", path+"/test", "test", map[string]any{}
					default:
						method, op.kind, body = "DELETE", "delete", map[string]any{}
					}
					code, d := call(method, path, body)
					op.answer, op.status = time.Now(), code
					if ep, ok := d["endpoint"].(map[string]any); ok {
						op.url, _ = ep["url"].(string)
						op.disabled, _ = ep["disabled"].(bool)
					}
					op.secret, _ = d["secret"].(string)
					r.mu.Lock()
					r.ops = append(r.ops, op)
					r.mu.Unlock()
					if op.kind == "delete" && code == 200 {
						once.Do(func() { close(stop) })
					}
				}
			}()
		}
		wg.Wait()
		// Let what is in flight arrive, then stop the endpoint's traffic.
		time.Sleep(100 * time.Millisecond)
		start = time.Now()
		if code, _ := call("DELETE", base+"/"+id, map[string]any{}); code == 200 {
			r.mu.Lock()
			r.ops = append(r.ops, mixOp{kind: "delete", start: start, answer: time.Now(), status: 200})
			r.mu.Unlock()
		}
		time.Sleep(100 * time.Millisecond)
		r.mu.Lock()
		if errs := r.violations(); len(errs) > 0 {
			t.Fatalf("seed %d, round %d: %d violations, the first:\n%s", seed, round, len(errs), strings.Join(errs[:min(5, len(errs))], "\n"))
		}
		r.mu.Unlock()
	}
}

// violations checks every arrival against the answered calls.
func (r *mixRound) violations() []string {
	var out []string
	ok := func(o mixOp) bool { return o.status >= 200 && o.status < 300 }
	for _, a := range r.arrivals {
		// Answered before the arrival: a delete, a disable, or a URL change
		// to another address ...
		for _, k := range r.ops {
			if !ok(k) || !k.answer.Before(a.at) {
				continue
			}
			killed := k.kind == "delete" || (k.kind == "disable") || (k.kind == "url" && k.url != a.addr)
			if !killed {
				continue
			}
			// ... unless a call that may have committed after it (started
			// before the arrival, answered after the kill started) left the
			// endpoint enabled at this address.
			revived := false
			for _, p := range r.ops {
				if k.kind != "delete" && ok(p) && p.kind != "delete" && p.kind != "replay" && p.kind != "test" && p.start.Before(a.at) &&
					p.answer.After(k.start) && p.url == a.addr && !p.disabled {
					revived = true
					break
				}
			}
			if !revived {
				out = append(out, fmt.Sprintf("%s arrived at %s %s after %q (%s) was answered", a.header.Get("webhook-id"), a.addr,
					a.at.Sub(k.answer), k.kind, k.url))
				break
			}
		}
		// Signatures: each by a secret we were given, at most two, none
		// older than the grace one.
		sigs := strings.Fields(a.header.Get("webhook-signature"))
		if len(sigs) > 2 {
			out = append(out, fmt.Sprintf("%s signed %d times", a.header.Get("webhook-id"), len(sigs)))
		}
		ts, _ := strconv.ParseInt(a.header.Get("webhook-timestamp"), 10, 64)
		for _, s := range sigs {
			var by *mixOp
			for i, o := range r.ops {
				if o.secret == "" || !ok(o) {
					continue
				}
				if k, err := webhooksig.Key(o.secret); err == nil && webhooksig.Sign(k, a.header.Get("webhook-id"), ts, a.body) == s {
					by = &r.ops[i]
				}
			}
			if by == nil {
				out = append(out, fmt.Sprintf("%s: a signature by no secret we were given", a.header.Get("webhook-id")))
				continue
			}
			// Two rotations answered in turn before the arrival, the first
			// started after this secret was given: it is past its grace.
			for _, r1 := range r.ops {
				if r1.kind != "rotate" || !ok(r1) || !by.answer.Before(r1.start) {
					continue
				}
				for _, r2 := range r.ops {
					if r2.kind == "rotate" && ok(r2) && r1.answer.Before(r2.start) && r2.answer.Before(a.at) {
						out = append(out, fmt.Sprintf("%s signed %s after the secret's second rotation was answered", a.header.Get("webhook-id"),
							a.at.Sub(r2.answer)))
					}
				}
			}
		}
	}
	return out
}
