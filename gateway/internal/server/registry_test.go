package server

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"partnerapi.dev/gateway/internal/config"
	"partnerapi.dev/gateway/internal/routes"
	pkgconfig "partnerapi.dev/pkg/config"
)

// registryFile is the system's process registry (tools/registry), read as a plain
// file: the gateway module does not depend on the tools module.
var registryFile = filepath.Join("..", "..", "..", "tools", "registry", "processes.json")

// registeredUpstreams are the processes the registry says the gateway forwards to.
func registeredUpstreams(t *testing.T) map[string]struct{ process, urlEnv string } {
	t.Helper()
	raw, err := os.ReadFile(registryFile)
	if err != nil {
		t.Fatalf("read the process registry: %v", err)
	}
	var reg struct {
		Processes []struct {
			Name     string `json:"name"`
			Upstream *struct {
				Service string `json:"service"`
				URLEnv  string `json:"urlEnv"`
			} `json:"upstream"`
		} `json:"processes"`
	}
	if err := json.Unmarshal(raw, &reg); err != nil {
		t.Fatalf("%s: %v", registryFile, err)
	}
	out := map[string]struct{ process, urlEnv string }{}
	for _, p := range reg.Processes {
		if p.Upstream != nil {
			out[p.Upstream.Service] = struct{ process, urlEnv string }{p.Name, p.Upstream.URLEnv}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s registers no upstream", registryFile)
	}
	return out
}

// TestUpstreamsFollowTheProcessRegistry: for every process the registry declares as an
// upstream, the variable it names reaches the gateway's upstream of the service it
// names; every service an operation belongs to can be given a URL; and the registry
// names no service the gateway has no operation for.
func TestUpstreamsFollowTheProcessRegistry(t *testing.T) {
	registered := registeredUpstreams(t)
	env := map[string]string{
		"REDIS_URL":             "redis://127.0.0.1:6379/0",
		"INTERNAL_CONTEXT_KEYS": "k1:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=",
		"IDENTITY_URL":          "http://identity.unset.test",
	}
	for svc, u := range registered {
		env[u.urlEnv] = "http://" + u.process + ".registry.test/" + svc
	}
	var cfg config.Config
	if err := pkgconfig.LoadMap(context.Background(), &cfg, env); err != nil {
		t.Fatal(err)
	}
	urls := upstreamURLs(cfg)
	for svc, u := range registered {
		if got, want := urls[routes.Service(svc)], env[u.urlEnv]; got != want {
			t.Errorf("registry: process %s is upstream %q through %s; the gateway's upstream %q has URL %q, want %q",
				u.process, svc, u.urlEnv, svc, got, want)
		}
	}
	owners := map[routes.Service]bool{}
	for _, ns := range []routes.NamingSet{routes.NamingA, routes.NamingB} {
		for _, op := range routes.Table(ns) {
			owners[op.Service] = true
		}
	}
	for svc := range owners {
		if _, ok := urls[svc]; !ok {
			t.Errorf("operations of service %q have no upstream URL variable", svc)
		}
		if _, ok := registered[string(svc)]; !ok {
			t.Logf("service %q owns operations but no registered process serves it yet: they answer 503", svc)
		}
	}
	for svc := range urls {
		if !owners[svc] {
			t.Errorf("upstream %q owns no operation", svc)
		}
	}
	for svc, u := range registered {
		if !owners[routes.Service(svc)] {
			t.Errorf("registry: process %s is upstream %q, which owns no gateway operation", u.process, svc)
		}
	}
}
