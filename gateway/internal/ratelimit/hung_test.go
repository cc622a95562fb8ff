package ratelimit

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"partnerapi.dev/pkg/localinfra"
	"partnerapi.dev/pkg/redisconn"
)

// countingHook counts the commands other than PING (the probe's) that reach
// the connection.
type countingHook struct{ n atomic.Int64 }

func (h *countingHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *countingHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !strings.EqualFold(cmd.Name(), "ping") {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (h *countingHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

var _ redis.Hook = (*countingHook)(nil)

// A frozen Redis (SIGSTOP: connections accepted, nothing answered) costs the
// requests that meet it the client's bounds once; later requests are counted
// in process without waiting for Redis, and counting returns to Redis once a
// probe gets an answer.
func TestHungRedisCostsItsTimeoutOnceAndIsUsedAgainWhenBack(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a private Redis")
	}
	ctx := context.Background()
	srv, err := localinfra.StartRedis(ctx, localinfra.RedisOptions{Dir: t.TempDir()})
	if err != nil {
		t.Skipf("no private Redis: %v", err)
	}
	t.Cleanup(func() { _ = srv.Resume(); _ = srv.Stop() })
	rdb, err := redisconn.Open(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	hook := &countingHook{}
	rdb.AddHook(hook)
	l := New(rdb, "hung:")
	p := Policy{Name: "partner", Quota: 1000, Window: time.Minute}
	if d := l.Allow(ctx, p, "k"); !d.Allowed || l.Fallbacks() {
		t.Fatalf("healthy: %+v fallback %v", d, l.Fallbacks())
	}

	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if d := l.Allow(ctx, p, "k"); !d.Allowed {
		t.Fatalf("first count with Redis hung: %+v", d)
	}
	took := time.Since(start)
	t.Logf("first count with Redis hung took %v", took)
	// The client's bounds are 100 ms; before them it took over a second.
	if took > 500*time.Millisecond || !l.Fallbacks() {
		t.Fatalf("first count took %v, fallback %v", took, l.Fallbacks())
	}
	before := hook.n.Load()
	for i := 0; i < 50; i++ {
		if d := l.Count(ctx, p, "k", i%2 == 0).Decide(); !d.Allowed {
			t.Fatalf("count %d refused: %+v", i, d)
		}
	}
	if n := hook.n.Load() - before; n != 0 {
		t.Fatalf("%d counts waited for the hung Redis", n)
	}

	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for l.Fallbacks() {
		if time.Now().After(deadline) {
			t.Fatal("still bypassing Redis after it came back")
		}
		time.Sleep(20 * time.Millisecond)
	}
	before = hook.n.Load()
	if d := l.Allow(ctx, p, "k"); !d.Allowed || l.Fallbacks() || hook.n.Load() == before {
		t.Fatalf("after resume: %+v fallback %v", d, l.Fallbacks())
	}
}
