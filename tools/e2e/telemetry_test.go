package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"partnerapi.dev/tools/jaeger"
	"partnerapi.dev/tools/partnerclient"
	"partnerapi.dev/tools/seed"
	"partnerapi.dev/tools/system"
)

// TestTelemetryToARealBackend runs the system exporting its traces to Jaeger,
// performs the flows that carry secrets and personal data (sign-in, consent
// and token for two users, webhook endpoint creation and secret rotation, a
// payment correction with its reason, a menu with its name) and asks Jaeger's
// query API what arrived: no span attribute, event or process tag, and no log
// line of any process, contains a value that was sent; a partner operation is
// one trace across the gateway, the service, Postgres and Redis; the outbox
// relay's trace links to the request that wrote the event; an upstream that
// cannot be reached gives a 503 whose trace has error status.
func TestTelemetryToARealBackend(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and starts every process and Jaeger")
	}
	if os.Getenv("E2E_TARGET") != "" {
		t.Skip("E2E_TARGET: this test starts processes of its own, exporting to its own Jaeger")
	}
	ctx := context.Background()
	bin, err := jaeger.Binary(ctx, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	jg, err := jaeger.Start(ctx, bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = jg.Close() })
	sys := startWith(t, system.Options{
		// A limit no other test using the same Redis can exhaust.
		Env: []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + jg.OTLP + "/v1/traces", "OTEL_BSP_SCHEDULE_DELAY=100", "LOG_FORMAT=json",
			"RATE_LIMIT_PER_MINUTE=100000"},
		// Catalog import is unreachable: its operations answer 503.
		Upstreams: map[string]string{"catalogimport": "http://127.0.0.1:1"},
	})
	aalto := seed.Generator{Seed: 42}.ID("restaurant/kahvila-aalto")
	rid := uuid.MustParse(aalto)
	partnerctl := partnerctlBinary(t)
	ownerToken := allScopesToken(t, partnerctl, sys, seed.OwnerEmail)
	nordic := seed.Generator{Seed: 42}.ID("organization/nordic-table")
	adminToken := allScopesToken(t, partnerctl, sys, seed.AdminEmail, "--organization", nordic)
	c := client(t, sys, ownerToken)

	limit := 1
	page, err := c.SearchOrdersWithResponse(ctx, rid, &partnerclient.SearchOrdersParams{Limit: &limit})
	if err != nil || page.JSON200 == nil || len(page.JSON200.Data.Matches) != 1 {
		t.Fatalf("searchOrders: %v %d %s", err, status(page), page.Body)
	}
	order, err := c.GetOrderWithResponse(ctx, rid, page.JSON200.Data.Matches[0].OrderId, nil)
	if err != nil || order.JSON200 == nil {
		t.Fatalf("getOrder: %v %d %s", err, status(order), order.Body)
	}
	menuCalls(t, c, rid, order.JSON200.Data.Order)
	accountingCalls(t, c, rid)
	secrets := webhookCalls(t, sys, aalto, ownerToken)
	if st, body := call(t, sys, http.MethodGet, "/v1/restaurants/"+aalto+"/catalog-import/capabilities", ownerToken, nil); st != http.StatusServiceUnavailable {
		t.Fatalf("catalog import unreachable: %d %v", st, body)
	}

	sent := append(secrets, seed.OwnerEmail, seed.AdminEmail, seed.DemoPassword, ownerToken, adminToken, sys.Token,
		"Paid in cash, keyed as card", "Keyed correctly after all", "Weekend brunch")
	const capabilities = "/v1/restaurants/:restaurantId/catalog-import/capabilities"
	// The last call's trace arrived: so did the others (each process
	// exports every 100 ms).
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		if _, ok := traceWith(allTraces(t, jg), "gateway", capabilities); ok {
			break
		}
	}
	time.Sleep(time.Second)
	traces := allTraces(t, jg)
	t.Run("no secret or personal data in any span or log line", func(t *testing.T) {
		for _, tr := range traces {
			for _, s := range tr.Spans {
				fields := s.Tags
				for _, l := range s.Logs {
					fields = append(fields, l.Fields...)
				}
				fields = append(fields, tr.Processes[s.ProcessID].Tags...)
				for _, f := range fields {
					for _, v := range sent {
						if strings.Contains(fmt.Sprint(f.Value), v) {
							t.Errorf("%s span %q %s carries %q: %.300v", tr.Processes[s.ProcessID].ServiceName, s.OperationName, f.Key, v, f.Value)
						}
					}
				}
			}
		}
		logs := sys.Logs()
		for _, v := range sent {
			if i := strings.Index(logs, v); i >= 0 {
				t.Errorf("a log line carries %q: %s", v, lineAround(logs, i))
			}
		}
		// Every process's metrics, labels included, as Prometheus scrapes them.
		scraped := 0
		for name, base := range sys.Internal {
			resp, err := http.Get(base + "/metrics")
			if err != nil {
				t.Errorf("%s /metrics: %v", name, err)
				continue
			}
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s /metrics: %d", name, resp.StatusCode)
				continue
			}
			scraped++
			for _, v := range sent {
				if i := strings.Index(string(body), v); i >= 0 {
					t.Errorf("a metric of %s carries %q: %s", name, v, lineAround(string(body), i))
				}
			}
		}
		if scraped == 0 {
			t.Error("no process answered /metrics")
		}
	})
	t.Run("a partner operation is one trace across gateway, service, Postgres and Redis", func(t *testing.T) {
		tr, ok := traceWith(traces, "gateway", "/v1/restaurants/:restaurantId/orders/:orderId")
		if !ok {
			t.Fatalf("no gateway trace of getOrder among %d traces", len(traces))
		}
		services := map[string]bool{}
		var roots []string
		var db, redis bool
		for _, s := range tr.Spans {
			services[tr.Processes[s.ProcessID].ServiceName] = true
			if len(s.References) == 0 {
				roots = append(roots, s.OperationName)
			}
			if v, _ := s.Tag("db.system.name"); v == "postgresql" && strings.HasPrefix(s.OperationName, "SELECT orders") {
				db = true
			}
			if v, _ := s.Tag("db.system"); v == "redis" {
				redis = true
			}
		}
		if len(roots) != 1 || !services["gateway"] || !services["orders"] || !db || !redis {
			t.Errorf("getOrder trace: roots %v, services %v, orders query %v, redis %v: %s", roots, services, db, redis, operations(tr))
		}
	})
	t.Run("the outbox relay is a trace linked to the writing request", func(t *testing.T) {
		var created []string // the traces of every POST to the menus (createMenu)
		for _, tr := range traces {
			for _, s := range tr.Spans {
				if m, _ := s.Tag("http.method"); m == "POST" && s.OperationName == "/v1/restaurants/:restaurantId/menus" && tr.Processes[s.ProcessID].ServiceName == "gateway" {
					created = append(created, tr.TraceID)
				}
			}
		}
		if len(created) == 0 {
			t.Fatal("no gateway trace of createMenu")
		}
		for _, tr := range traces {
			for _, s := range tr.Spans {
				if s.OperationName != "outbox relay" || tr.Processes[s.ProcessID].ServiceName != "menus" {
					continue
				}
				for _, r := range s.References {
					if r.RefType == "FOLLOWS_FROM" && slices.Contains(created, r.TraceID) {
						return
					}
				}
			}
		}
		t.Errorf("no menus outbox relay span links to createMenu's trace %v", created)
	})
	t.Run("a 5xx is a trace with error status", func(t *testing.T) {
		tr, ok := traceWith(traces, "gateway", capabilities)
		if !ok {
			t.Fatal("no gateway trace of the catalog import call")
		}
		for _, s := range tr.Spans {
			if code, _ := s.Tag("http.status_code"); code == "503" {
				if v, _ := s.Tag("otel.status_code"); v != "ERROR" {
					t.Errorf("the 503's span %q has status %q", s.OperationName, v)
				}
				return
			}
		}
		t.Errorf("no 503 span: %s", operations(tr))
	})
	t.Run("an idle system starts no trace but for work", func(t *testing.T) {
		// Nothing is sent for idleFor: the pollers (outbox relays, the
		// webhook worker, the events listener) run many times meanwhile. A
		// trace that starts then must be work: a relay that found events, a
		// webhook delivery (retries of the endpoints created above) or the
		// gateway's record of use of the calls above (sent every 30 s).
		const idleFor = 30 * time.Second
		before := map[string]bool{}
		for _, tr := range allTraces(t, jg) {
			before[tr.TraceID] = true
		}
		time.Sleep(idleFor + time.Second)
		roots := map[string]int{}
		for _, tr := range allTraces(t, jg) {
			if before[tr.TraceID] {
				continue
			}
			for _, s := range tr.Spans {
				if len(s.References) == 0 {
					roots[tr.Processes[s.ProcessID].ServiceName+" "+s.OperationName]++
				}
			}
		}
		t.Logf("traces started while idle for %s: %v", idleFor, roots)
		for root, n := range roots {
			if !strings.HasSuffix(root, " outbox relay") && !strings.HasSuffix(root, " webhook delivery") && root != "gateway grant use record" {
				t.Errorf("%d traces rooted at %q started while the system was idle", n, root)
			}
		}
	})
}

// webhookCalls creates a webhook endpoint and rotates its secret, and answers
// the secrets it was given.
func webhookCalls(t *testing.T, sys *system.Stack, restaurant, token string) []string {
	t.Helper()
	base := "/v1/restaurants/" + restaurant + "/webhook-endpoints"
	secret := regexp.MustCompile(`whsec_[A-Za-z0-9+/]+=*`)
	st, created := call(t, sys, http.MethodPost, base, token, map[string]any{"url": "http://127.0.0.1:9/hook", "eventTypes": []string{"menu.created"}, "idempotencyKey": uuid.NewString()})
	endpoint, _ := created["endpoint"].(map[string]any)
	id, _ := endpoint["id"].(string)
	first, _ := json.Marshal(created)
	if st != http.StatusCreated || id == "" || !secret.Match(first) {
		t.Fatalf("createWebhookEndpoint: %d %s", st, first)
	}
	st, rotated := call(t, sys, http.MethodPost, base+"/"+id+"/rotate-secret", token, map[string]any{"gracePeriodSeconds": 60, "idempotencyKey": uuid.NewString()})
	second, _ := json.Marshal(rotated)
	if st != http.StatusOK || !secret.Match(second) {
		t.Fatalf("rotateWebhookEndpointSecret: %d %s", st, second)
	}
	var out []string
	for _, s := range append(secret.FindAllString(string(first), -1), secret.FindAllString(string(second), -1)...) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func allTraces(t *testing.T, jg *jaeger.Server) []jaeger.Trace {
	t.Helper()
	services, err := jg.Services(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var out []jaeger.Trace
	for _, svc := range services {
		trs, err := jg.Traces(context.Background(), svc, time.Hour, 10000)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range trs {
			if !seen[tr.TraceID] {
				seen[tr.TraceID] = true
				out = append(out, tr)
			}
		}
	}
	return out
}

func traceWith(traces []jaeger.Trace, service, operation string) (jaeger.Trace, bool) {
	for _, tr := range traces {
		for _, s := range tr.Spans {
			if s.OperationName == operation && tr.Processes[s.ProcessID].ServiceName == service {
				return tr, true
			}
		}
	}
	return jaeger.Trace{}, false
}

func operations(tr jaeger.Trace) string {
	var ops []string
	for _, s := range tr.Spans {
		ops = append(ops, tr.Processes[s.ProcessID].ServiceName+":"+s.OperationName)
	}
	return strings.Join(ops, ", ")
}

func lineAround(s string, i int) string {
	start := strings.LastIndexByte(s[:i], '\n') + 1
	end := strings.IndexByte(s[i:], '\n')
	if end < 0 {
		return s[start:]
	}
	return s[start : i+end]
}
