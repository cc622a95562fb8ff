package server_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"partnerapi.dev/pkg/localinfra"
	"partnerapi.dev/services/contracts"
)

var rateLimitHeader = regexp.MustCompile(`^"partner";r=(\d+);t=(\d+)$`)

func TestSixtyPerMinuteAcrossTwoReplicas(t *testing.T) {
	e := newEnv(t)
	e.vars["RATE_LIMIT_PER_MINUTE"] = "60"
	prefix := "test:" + randomHex(8) + ":"
	a, b := e.start(nil, prefix), e.start(nil, prefix)
	tok := e.id.token(t, tokenOpts{})
	path := "/v1/restaurants/" + restA + "/orders"
	// Warm the token and grant caches so the 60 requests run quickly.
	start := time.Now()
	allowed := 0
	var last response
	for i := 0; i < 60; i++ {
		g := a
		if i%2 == 1 {
			g = b
		}
		last = g.do(t, "GET", path, tok, nil)
		if last.status == 200 {
			allowed++
		}
		if last.header.Get("RateLimit-Policy") != `"partner";q=60;w=60` {
			t.Fatalf("policy %q", last.header.Get("RateLimit-Policy"))
		}
		m := rateLimitHeader.FindStringSubmatch(last.header.Get("RateLimit"))
		if m == nil {
			t.Fatalf("RateLimit %q", last.header.Get("RateLimit"))
		}
		if i == 0 && m[1] != "59" {
			t.Errorf("first remaining %s", m[1])
		}
	}
	if allowed != 60 {
		t.Fatalf("allowed %d of the first 60", allowed)
	}
	// One request per second is regained (GCRA); allow for a slow machine.
	extra := int(time.Since(start) / time.Second)
	var r response
	for i := 0; i <= extra; i++ {
		r = b.do(t, "GET", path, tok, nil)
		if r.status == 429 {
			break
		}
	}
	if r.status != 429 || r.code() != "rate_limited" {
		t.Fatalf("after 60: %d %s", r.status, r.body)
	}
	ra, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || ra < 1 || ra > 60 {
		t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
	}
	// The message says the same wait, in English ("1 second", "2 seconds").
	wait := fmt.Sprintf("Wait %d seconds, then retry.", ra)
	if ra == 1 {
		wait = "Wait 1 second, then retry."
	}
	if msg, _ := r.env["message"].(string); !strings.HasSuffix(msg, wait) {
		t.Errorf("429 message %q, want it to end %q", msg, wait)
	}
	if m := rateLimitHeader.FindStringSubmatch(r.header.Get("RateLimit")); m == nil || m[1] != "0" {
		t.Errorf("RateLimit on 429: %q", r.header.Get("RateLimit"))
	}
	if r.header.Get("X-Request-Id") == "" || r.env["request_id"] != r.header.Get("X-Request-Id") {
		t.Errorf("429 lacks request id")
	}
	// The other replica agrees.
	if r := a.do(t, "GET", path, tok, nil); r.status != 429 {
		t.Errorf("replica a: %d", r.status)
	}
	// Another user of the same client has their own quota.
	e.id.setGrant(func() *contracts.Grant { g := restaurantGrant("g-u2"); g.UserID = "user-2"; return g }())
	if r := a.do(t, "GET", path, e.id.token(t, tokenOpts{gid: "g-u2", sub: "user-2"}), nil); r.status != 200 {
		t.Errorf("other user: %d", r.status)
	}
}

func TestUnauthenticatedTrafficIsLimitedPerAddress(t *testing.T) {
	e := newEnv(t)
	e.vars["UNAUTH_RATE_LIMIT_PER_MINUTE"] = "3"
	g := e.start(nil, "")
	for i := 0; i < 3; i++ {
		if r := g.do(t, "GET", "/v1/restaurants", "", nil); r.status != 401 {
			t.Fatalf("request %d: %d", i, r.status)
		}
	}
	r := g.do(t, "GET", "/oauth2/authorize", "", nil)
	if r.status != 429 || r.code() != "rate_limited" || r.header.Get("Retry-After") == "" || r.header.Get("RateLimit-Policy") != `"partner";q=100000;w=60, "address";q=3;w=60` {
		t.Fatalf("%d %v %s", r.status, r.header, r.body)
	}
	// Invalid tokens count against the address too.
	if r := g.do(t, "GET", "/v1/restaurants", "garbage", nil); r.status != 429 {
		t.Errorf("invalid token: %d", r.status)
	}
	// A valid token is limited by the partner policy instead.
	if r := g.do(t, "GET", "/v1/restaurants", e.id.token(t, tokenOpts{}), nil); r.status != 200 {
		t.Errorf("valid token: %d %s", r.status, r.body)
	}
}

func TestRedisDownFallsBackToLocalLimiter(t *testing.T) {
	ctx := context.Background()
	srv, err := localinfra.StartRedis(ctx, localinfra.RedisOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	opts, _ := redis.ParseURL(srv.URL)
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })

	e := newEnv(t)
	e.vars["REDIS_URL"] = srv.URL
	e.vars["RATE_LIMIT_PER_MINUTE"] = "5"
	e.vars["UNAUTH_RATE_LIMIT_PER_MINUTE"] = "5"
	g := e.start(rdb, "")
	tok := e.id.token(t, tokenOpts{})
	path := "/v1/restaurants/" + restA + "/orders"
	for i := 0; i < 2; i++ {
		if r := g.do(t, "GET", path, tok, nil); r.status != 200 {
			t.Fatalf("with Redis: %d", r.status)
		}
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	statuses := map[int]int{}
	var last response
	for i := 0; i < 8; i++ {
		last = g.do(t, "GET", path, tok, nil)
		statuses[last.status]++
		if last.status >= 500 {
			t.Fatalf("Redis down gave %d %s", last.status, last.body)
		}
		if last.header.Get("RateLimit-Policy") != `"partner";q=5;w=60` || last.header.Get("RateLimit") == "" {
			t.Errorf("headers %v", last.header)
		}
	}
	if statuses[200] != 5 || statuses[429] != 3 || last.header.Get("Retry-After") == "" {
		t.Errorf("fallback answered %v", statuses)
	}
	if !g.g.Limiter().Fallbacks() {
		t.Error("limiter does not report the fallback")
	}
	// Unauthenticated traffic and readiness do not fail with 5xx on the limiter.
	if r := g.do(t, "GET", "/v1/restaurants", "", nil); r.status != 401 {
		t.Errorf("no token with Redis down: %d", r.status)
	}
	if r := g.do(t, "GET", "/readyz", "", nil); r.status != http.StatusServiceUnavailable {
		t.Errorf("readyz with Redis down: %d", r.status)
	}
}

func TestClientAddressHeaderFromATrustedIngress(t *testing.T) {
	e := newEnv(t)
	e.vars["UNAUTH_RATE_LIMIT_PER_MINUTE"] = "2"
	e.vars["CLIENT_ADDRESS_HEADER"] = "X-Forwarded-For"
	g := e.start(nil, "")
	for i := 0; i < 2; i++ {
		if r := g.do(t, "GET", "/v1/restaurants", "", nil, "X-Forwarded-For", "9.9.9.9, 1.1.1.1"); r.status != 401 {
			t.Fatalf("%d", r.status)
		}
	}
	if r := g.do(t, "GET", "/v1/restaurants", "", nil, "X-Forwarded-For", "1.1.1.1"); r.status != 429 {
		t.Errorf("same address: %d", r.status)
	}
	if r := g.do(t, "GET", "/v1/restaurants", "", nil, "X-Forwarded-For", "2.2.2.2"); r.status != 401 {
		t.Errorf("other address: %d", r.status)
	}
	// The header is still not forwarded.
	if r := g.do(t, "GET", "/v1/restaurants/"+restA+"/orders", e.id.token(t, tokenOpts{}), nil, "X-Forwarded-For", "3.3.3.3"); r.status != 200 || e.services.last().Header.Get("X-Forwarded-For") != "" {
		t.Errorf("%d %v", r.status, e.services.last().Header)
	}
}

// A read whose partner had room in its quota at this replica is sent to the
// service while Redis counts it; the answer is still the one a count made
// first would give.
func TestOverlappedReadsAnswerAsIfCountedFirst(t *testing.T) {
	e := newEnv(t)
	e.vars["RATE_LIMIT_PER_MINUTE"] = "10"
	prefix := "test:" + randomHex(8) + ":"
	a, b, c, d := e.start(nil, prefix), e.start(nil, prefix), e.start(nil, prefix), e.start(nil, prefix)
	tok := e.id.token(t, tokenOpts{})
	orders := "/v1/restaurants/" + restA + "/orders"
	// a, c and d each see the partner with most of its quota left...
	for _, g := range []gw{a, c, d} {
		if r := g.do(t, "GET", orders, tok, nil); r.status != 200 {
			t.Fatalf("warm-up: %d %s", r.status, r.body)
		}
	}
	// ...then the partner spends the rest of it at b.
	for i := 0; i < 7; i++ {
		if r := b.do(t, "GET", orders, tok, nil); r.status != 200 {
			t.Fatalf("request %d at b: %d", i, r.status)
		}
	}
	served := e.services.count()

	// a overlaps the count with the call to the service, which answers,
	// but Redis refuses: the partner gets the 429, not the service's answer.
	r := a.do(t, "GET", orders, tok, nil)
	if r.status != 429 || r.code() != "rate_limited" || r.header.Get("Retry-After") == "" {
		t.Fatalf("overlapped read over the limit: %d %s", r.status, r.body)
	}
	if m := rateLimitHeader.FindStringSubmatch(r.header.Get("RateLimit")); m == nil || m[1] != "0" {
		t.Errorf("RateLimit %q", r.header.Get("RateLimit"))
	}
	if e.services.count() != served+1 {
		t.Fatalf("the overlapped read reached the service %d times", e.services.count()-served)
	}
	// Now a knows the partner is out of quota: its reads are counted first
	// and never reach the service.
	for i := 0; i < 3; i++ {
		if r := a.do(t, "GET", orders, tok, nil); r.status != 429 {
			t.Fatalf("read after the limit: %d", r.status)
		}
	}
	if e.services.count() != served+1 {
		t.Errorf("reads over the limit reached the service")
	}

	// The rate limit answers before the later checks: a read lacking a
	// scope gets the 429, not the 403.
	narrow := e.id.token(t, tokenOpts{scopes: []string{"svc.orders.read"}})
	if r := c.do(t, "GET", "/v1/restaurants/"+restA+"/menus", narrow, nil); r.status != 429 {
		t.Errorf("overlapped read missing a scope: %d %s", r.status, r.body)
	}
	// Writes are never sent ahead of their count.
	if r := d.do(t, "POST", "/v1/restaurants/"+restA+"/menus", tok, strings.NewReader(`{}`)); r.status != 429 {
		t.Errorf("write over the limit: %d %s", r.status, r.body)
	}
	if e.services.count() != served+1 {
		t.Errorf("a refused request reached the service")
	}
}
