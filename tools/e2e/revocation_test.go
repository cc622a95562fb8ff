package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/tools/registry"
	"partnerapi.dev/tools/seed"
	"partnerapi.dev/tools/system"
)

// secondGateway starts another gateway process beside the system's, as a
// second replica: same identity, upstreams, keys and Redis, its own port.
func secondGateway(t *testing.T, sys *system.Stack) string {
	t.Helper()
	addr := testenv.FreeAddr(t)
	env := append(os.Environ(), "HTTP_ADDR="+addr, "INTERNAL_HTTP_ADDR="+testenv.FreeAddr(t), "PUBLIC_BASE_URL="+sys.Gateway,
		"REDIS_URL="+testenv.RedisURL(t), "INTERNAL_CONTEXT_KEYS="+sys.Secrets["INTERNAL_CONTEXT_KEYS"], "LOG_LEVEL=warn",
		fmt.Sprintf("RATE_LIMIT_PER_MINUTE=%d", localRatePerMinute), fmt.Sprintf("RATE_LIMIT_KEY_PREFIX=second-%d:", time.Now().UnixNano()))
	for _, p := range registry.Processes() {
		if p.Upstream != nil && sys.Public[p.Name] != "" {
			env = append(env, p.Upstream.URLEnv+"="+sys.Public[p.Name])
		}
	}
	var logs bytes.Buffer
	cmd := exec.Command(filepath.Join(binaries(t), "gateway"))
	cmd.Env, cmd.Stdout, cmd.Stderr = env, &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("second gateway not ready:\n%s", logs.String())
		}
	}
}

// callStatus is a partner call's status through the gateway at base, without
// the answer checks of get: this is polled at a high rate.
func callStatus(t *testing.T, base, token string) int {
	req, _ := http.NewRequest(http.MethodGet, base+"/v1/restaurants", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// revocationsReachEveryGateway: an authorization ended at identity (its
// token at /oauth2/revoke, or the whole grant by the operator) is refused
// by every gateway replica within a second, although each had it cached
// for GRANT_CACHE_TTL (5 s): they follow identity's list of grant changes.
// revocations times the delay from the revocation's answer to each
// gateway's first refusal and logs its distribution.
func revocationsReachEveryGateway(t *testing.T, sys *system.Stack, revocations int) {
	gateways := []string{sys.Gateway, secondGateway(t, sys)}
	partnerctl := partnerctlBinary(t)
	admin := sys.Internal["identity"]
	var delays []time.Duration
	for i := range revocations {
		// At identity itself: a hundred sign-ins through the gateway would
		// meet its per-address limit of the pages.
		tok := tokenAt(t, partnerctl, sys.Identity, seed.OwnerEmail, []string{"svc.restaurant.read"})
		for _, g := range gateways {
			if st := callStatus(t, g, tok); st != http.StatusOK {
				t.Fatalf("gateway %s before revocation %d: %d", g, i, st)
			}
		}
		var req *http.Request
		if i%2 == 0 {
			form := url.Values{"token": {tok}, "token_type_hint": {"access_token"}, "client_id": {seed.DemoClientID}}
			req, _ = http.NewRequest(http.MethodPost, sys.Gateway+"/oauth2/revoke", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		} else {
			claims, err := system.TokenClaims(tok)
			if err != nil {
				t.Fatal(err)
			}
			req, _ = http.NewRequest(http.MethodPost, admin+"/admin/v1/grants/"+claims.GrantID+"/revoke", nil)
			req.Header.Set("Authorization", "Bearer "+sys.Secrets["ADMIN_TOKEN"])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("revocation %d: %d", i, resp.StatusCode)
		}
		revoked := time.Now()
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, g := range gateways {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				for ctx.Err() == nil {
					if st := callStatus(t, g, tok); st == http.StatusUnauthorized || st == http.StatusForbidden {
						mu.Lock()
						delays = append(delays, time.Since(revoked))
						mu.Unlock()
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
				t.Errorf("gateway %s still honours revocation %d after 5 s", g, i)
			})
		}
		wg.Wait()
	}
	slices.Sort(delays)
	if len(delays) == 0 {
		t.Fatal("no refusal seen")
	}
	q := func(p float64) time.Duration { return delays[int(p*float64(len(delays)-1))].Round(time.Millisecond) }
	t.Logf("revocation to refusal, %d revocations through %d gateways: p50 %v, p99 %v, max %v", revocations, len(gateways), q(0.5), q(0.99), q(1))
	if late := delays[len(delays)-1]; late > time.Second {
		t.Errorf("a gateway honoured a revoked authorization for %v, over 1 s", late.Round(time.Millisecond))
	}
}
