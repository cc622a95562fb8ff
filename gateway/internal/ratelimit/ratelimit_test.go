package ratelimit

import (
	"bufio"
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"partnerapi.dev/pkg/redisconn"
	"partnerapi.dev/pkg/testenv"
)

func TestLocalGCRAAllowsTheQuotaThenOnePerInterval(t *testing.T) {
	g := newLocalGCRA()
	p := Policy{Name: "partner", Quota: 60, Window: time.Minute}
	now := time.Unix(1_700_000_000, 0)
	for i := 0; i < 60; i++ {
		d := g.allow(p, "k", now)
		if !d.Allowed || d.Remaining != 59-i {
			t.Fatalf("request %d: %+v", i, d)
		}
	}
	d := g.allow(p, "k", now)
	if d.Allowed || d.RetryAfterSeconds() != 1 {
		t.Fatalf("61st: %+v", d)
	}
	if d.Header(p) != `"partner";r=0;t=60` {
		t.Errorf("header %q", d.Header(p))
	}
	if !g.allow(p, "k", now.Add(time.Second)).Allowed {
		t.Error("one request per second is regained")
	}
	if !g.allow(p, "other", now).Allowed {
		t.Error("keys are separate")
	}
	if p.PolicyHeader() != `"partner";q=60;w=60` {
		t.Errorf("policy %q", p.PolicyHeader())
	}
}

func TestFallbackIsCountedAsAMetric(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer rdb.Close()
	l := New(rdb, "t:")
	p := Policy{Name: "partner", Quota: 2, Window: time.Minute}
	var allowed int
	for i := 0; i < 3; i++ {
		if l.Allow(context.Background(), p, "k").Allowed {
			allowed++
		}
	}
	if allowed != 2 || !l.Fallbacks() {
		t.Fatalf("allowed %d fallback %v", allowed, l.Fallbacks())
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "gateway.ratelimit.fallback" {
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					total += dp.Value
				}
			}
		}
	}
	if total != 3 {
		t.Errorf("fallback counter %d, want 3", total)
	}
}

func TestCountDefersOnlyWithRoomInTheQuota(t *testing.T) {
	l := New(nil, "t:")
	p := Policy{Name: "partner", Quota: 4, Window: time.Minute}
	ctx := context.Background()
	var deferred []bool
	var allowed []bool
	for i := 0; i < 5; i++ {
		c := l.Count(ctx, p, "k", true)
		deferred = append(deferred, c.Deferred())
		allowed = append(allowed, c.Decide().Allowed)
	}
	// Unknown key: counted first. Remaining 3: spending one more leaves 2,
	// half of 4, so the next one is deferred; after it, remaining 2 would
	// drop below half: counted first from then on.
	if want := []bool{false, true, false, false, false}; !slices.Equal(deferred, want) {
		t.Errorf("deferred %v, want %v", deferred, want)
	}
	if want := []bool{true, true, true, true, false}; !slices.Equal(allowed, want) {
		t.Errorf("allowed %v, want %v", allowed, want)
	}
	first, second := l.Count(ctx, p, "fresh", false), l.Count(ctx, p, "fresh", false)
	if first.Deferred() || second.Deferred() {
		t.Error("a count that may not be deferred was")
	}
	big := Policy{Name: "partner", Quota: 60, Window: time.Minute}
	l.Count(ctx, big, "d", false)
	c := l.Count(ctx, big, "d", true)
	wasDeferred := c.Deferred()
	d1, d2 := c.Decide(), c.Decide()
	if !wasDeferred || d1 != d2 || d1.Remaining != 58 || !l.reserve(big, "d") {
		t.Errorf("deferred %v, decisions %+v then %+v; want one deferred count, its slot freed", wasDeferred, d1, d2)
	}
}

// oddRedis speaks RESP well enough for a client to connect, but answers
// every script with an integer where redis_rate expects an array.
func oddRedis(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				rd := bufio.NewReader(conn)
				for {
					line, err := rd.ReadString('\n') // *<n>
					if err != nil {
						return
					}
					n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
					var args []string
					for i := 0; i < n; i++ {
						_, _ = rd.ReadString('\n') // $<len>
						arg, _ := rd.ReadString('\n')
						args = append(args, strings.TrimSpace(arg))
					}
					if len(args) == 0 {
						return
					}
					answer := "+OK\r\n"
					switch cmd := strings.ToUpper(args[0]); {
					case cmd == "HELLO": // as a Redis before 6 would
						answer = "-ERR unknown command 'HELLO'\r\n"
					case strings.HasPrefix(cmd, "EVAL"):
						answer = ":1\r\n"
					}
					if _, err := conn.Write([]byte(answer)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func TestAnAnswerOfTheWrongShapeFallsBackInsteadOfPanicking(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: oddRedis(t), Protocol: 2, MaxRetries: -1, DisableIdentity: true})
	defer rdb.Close()
	l := New(rdb, "t:")
	p := Policy{Name: "partner", Quota: 10, Window: time.Minute}
	ctx := context.Background()
	if d := l.Count(ctx, p, "k", false).Decide(); !d.Allowed || d.Remaining != 9 {
		t.Fatalf("first count: %+v", d)
	}
	if !l.Fallbacks() {
		t.Error("an unreadable answer did not switch to the local limiter")
	}
	// Deferred too, once Redis is tried again.
	time.Sleep(probeInterval + 100*time.Millisecond)
	c := l.Count(ctx, p, "k", true)
	if d := c.Decide(); !d.Allowed || !l.Fallbacks() {
		t.Errorf("deferred count: %+v", d)
	}
}

func TestOneDeferredCountPerKeyAndOnlyWithRoom(t *testing.T) {
	l := New(nil, "t:")
	p := Policy{Name: "partner", Quota: 60, Window: time.Minute}
	l.Count(context.Background(), p, "k", false) // 59 left
	if l.reserve(p, "other") {
		t.Error("an unknown key was deferred")
	}
	if !l.reserve(p, "k") {
		t.Fatal("a key with room was not deferred")
	}
	if l.reserve(p, "k") {
		t.Error("a second count of the key was deferred while one is")
	}
	l.remember(p, "k", 58, true)
	if !l.reserve(p, "k") {
		t.Error("the slot was not freed by the deferred decision")
	}
	l.remember(p, "k", 30, true)
	if l.reserve(p, "k") {
		t.Error("30 of 60 left: this request would leave less than half, yet it was deferred")
	}
}

func TestMain(m *testing.M) { testenv.Main(m) }

func TestConcurrentCountsShareRedisCallsAndStayExact(t *testing.T) {
	rdb, err := redisconn.Open(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	var calls callCounter
	rdb.AddHook(&calls)
	ctx := context.Background()
	const requests = 200
	for _, quota := range []int{1000, 60} { // room for all of them; room for 60
		l := New(rdb, "t:"+strconv.FormatInt(time.Now().UnixNano(), 36)+":")
		p := Policy{Name: "partner", Quota: quota, Window: time.Hour}
		before := calls.n.Load()
		ds := make([]Decision, requests)
		var wg sync.WaitGroup
		for i := range ds {
			wg.Go(func() { ds[i] = l.Count(ctx, p, "k", false).Decide() })
		}
		wg.Wait()
		used := int(calls.n.Load() - before)

		// As if counted one after another: as many allowed, and they
		// leave each remaining count from quota-1 down once (within one:
		// redis_rate computes it in floating point and truncates); the
		// others are refused with a time to retry.
		var remaining []int
		for _, d := range ds {
			if d.Allowed {
				remaining = append(remaining, d.Remaining)
			} else if d.RetryAfter <= 0 {
				t.Errorf("quota %d: a refused request has Retry-After %s", quota, d.RetryAfter)
			}
		}
		slices.Sort(remaining)
		var want []int
		for r := max(quota-requests, 0); r < quota; r++ {
			want = append(want, r)
		}
		if len(remaining) != len(want) {
			t.Fatalf("quota %d: %d of %d requests allowed, want %d", quota, len(remaining), requests, len(want))
		}
		for i := range want {
			if d := remaining[i] - want[i]; d < -1 || d > 1 {
				t.Fatalf("quota %d: allowed requests had remaining %v, want each of %d..%d once", quota, remaining, want[0], quota-1)
			}
		}
		if used > requests/2 {
			t.Errorf("quota %d: %d Redis calls for %d requests at once: counts were not batched", quota, used, requests)
		}
		t.Logf("quota %d: %d requests at once, %d Redis calls", quota, requests, used)
		if l.Fallbacks() {
			t.Errorf("quota %d: the limiter fell back to local counting", quota)
		}
		if len(l.flights) != 0 {
			t.Errorf("quota %d: %d keys still have counts on their way", quota, len(l.flights))
		}
	}
}

// callCounter counts the commands a client sends.
type callCounter struct{ n atomic.Int64 }

func (c *callCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *callCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c *callCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
