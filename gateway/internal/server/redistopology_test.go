package server_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"partnerapi.dev/pkg/localinfra"
	"partnerapi.dev/pkg/redisconn"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/contracts"
)

var topologies = map[string]func(testing.TB) *localinfra.RedisTopology{
	"cluster": testenv.RedisCluster, "sentinel": testenv.RedisSentinel,
}

// topologyGateways starts two gateways counting in the topology at url, each
// with its own client, as two replicas do; it answers them and their key
// prefix.
func topologyGateways(t *testing.T, e *env, url string) (gw, gw, string) {
	t.Helper()
	e.vars["REDIS_URL"] = url
	e.vars["RATE_LIMIT_PER_MINUTE"] = "60"
	prefix := "test:" + randomHex(8) + ":"
	var gws [2]gw
	for i := range gws {
		rdb, err := redisconn.Open(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rdb.Close() })
		gws[i] = e.start(rdb, prefix)
	}
	return gws[0], gws[1], prefix
}

// burst sends n requests with token, 50 at once, alternating between the
// gateways, and counts the statuses.
func burst(t *testing.T, a, b gw, path, token string, n int) map[int]int {
	t.Helper()
	var mu sync.Mutex
	statuses := map[int]int{}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				g := a
				if i%2 == 0 {
					g = b
				}
				r := g.do(t, "GET", path, token, nil)
				mu.Lock()
				statuses[r.status]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return statuses
}

// userTokens makes a grant and a token for each of n users of one client:
// their limiter keys fall in different slots of a cluster.
func userTokens(t *testing.T, e *env, n int) []string {
	t.Helper()
	tokens := make([]string, n)
	for i := range tokens {
		gid, sub := fmt.Sprintf("g-topology-%d", i), fmt.Sprintf("user-topology-%d", i)
		e.id.setGrant(func() *contracts.Grant { g := restaurantGrant(gid); g.UserID = sub; return g }())
		tokens[i] = e.id.token(t, tokenOpts{gid: gid, sub: sub})
	}
	return tokens
}

// seconds is d in whole seconds, rounded up.
func seconds(d time.Duration) int { return int(d/time.Second) + 1 }

// Each of several users (keys in different slots of the cluster, or behind
// the Sentinel-managed primary) gets exactly the quota across two gateways
// at 50 requests at once: 60 of 200, plus the one request a second GCRA
// gives back while they run.
func TestExactQuotaAcrossTwoGatewaysOnRedisTopologies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Redis Cluster and a Sentinel set")
	}
	for name, start := range topologies {
		t.Run(name, func(t *testing.T) {
			topo := start(t)
			e := newEnv(t)
			a, b, _ := topologyGateways(t, e, topo.URL)
			path := "/v1/restaurants/" + restA + "/orders"
			for i, tok := range userTokens(t, e, 4) {
				began := time.Now()
				statuses := burst(t, a, b, path, tok, 200)
				regained := int(time.Since(began) / time.Second)
				if statuses[200] < 60 || statuses[200] > 60+regained || statuses[200]+statuses[429] != 200 {
					t.Errorf("user %d: %v in %s (60 admitted plus at most %d regained)", i, statuses, time.Since(began), regained)
				}
			}
		})
	}
}

// A master (the Sentinel set's primary) killed under load: no request fails,
// and until the gateways reach the replica that took over, each counts the
// keys it cannot reach in its own memory, so a key that had spent its quota
// gets at most one quota more per gateway (plus what each regains
// meanwhile); then the quota is counted exactly again. Redis replicates
// asynchronously, so the promoted replica may lack the last counts the
// master took: at most one quota more in Redis.
func TestRedisFailoverUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Redis Cluster and a Sentinel set")
	}
	for name, start := range topologies {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			topo := start(t)
			e := newEnv(t)
			a, b, prefix := topologyGateways(t, e, topo.URL)
			path := "/v1/restaurants/" + restA + "/orders"
			tokens := userTokens(t, e, 40)
			if s := burst(t, a, b, path, tokens[0], 100); s[200] < 60 || s[429] == 0 {
				t.Fatalf("before the failover: %v", s)
			}
			// The master holding the user's count (the only count under
			// the test's key prefix).
			victim, err := topo.MasterHolding(ctx, "*"+prefix+"*")
			if err != nil {
				t.Fatal(err)
			}
			var (
				mu       sync.Mutex
				statuses = map[int]int{}
				stop     atomic.Bool
				load     sync.WaitGroup
			)
			load.Go(func() {
				for !stop.Load() {
					s := burst(t, a, b, path, tokens[0], 50)
					mu.Lock()
					for k, v := range s {
						statuses[k] += v
					}
					mu.Unlock()
				}
			})
			killed := time.Now()
			if err := topo.Nodes[victim].Kill(); err != nil {
				t.Fatal(err)
			}
			if name == "cluster" {
				err = topo.WaitClusterFailover(ctx, victim, 60*time.Second)
			} else {
				err = topo.WaitNewPrimary(ctx, "partnerapi", victim, 60*time.Second)
			}
			failover := time.Since(killed)
			// Counted in Redis again once another user gets one quota
			// across both gateways, not one per gateway.
			var resumed time.Duration
			for _, tok := range tokens[1:] {
				began := time.Now()
				if s := burst(t, a, b, path, tok, 150); s[200] <= 60+seconds(time.Since(began)) {
					resumed = time.Since(killed)
					break
				}
				time.Sleep(250 * time.Millisecond)
			}
			stop.Store(true)
			load.Wait()
			elapsed := time.Since(killed)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: the replica took over %s after the kill, the gateways counted in Redis again after %s; over %s: %v",
				name, failover.Round(time.Millisecond), resumed.Round(time.Millisecond), elapsed.Round(time.Millisecond), statuses)
			if resumed == 0 {
				t.Fatalf("the gateways did not count in Redis again")
			}
			for status, n := range statuses {
				if status != 200 && status != 429 {
					t.Errorf("%d answers %d", n, status)
				}
			}
			if most := 3*60 + 2*seconds(resumed) + seconds(elapsed); statuses[200] > most {
				t.Errorf("%d admitted during the failover; at most a quota per gateway and one in Redis, plus what each regains, %d", statuses[200], most)
			}
		})
	}
}
