package registry

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Fatalf("no go.work two levels up: %v", err)
	}
	return root
}

// goWorkUses are the directories of go.work's use block.
func goWorkUses(t *testing.T, root string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	var uses []string
	in := false
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "use (":
			in = true
		case in && line == ")":
			in = false
		case in && line != "":
			uses = append(uses, filepath.Clean(strings.TrimPrefix(line, "./")))
		case strings.HasPrefix(line, "use "):
			uses = append(uses, filepath.Clean(strings.TrimPrefix(strings.TrimPrefix(line, "use "), "./")))
		}
	}
	return uses
}

func TestModulesAreTheWorkspace(t *testing.T) {
	root := repoRoot(t)
	uses := goWorkUses(t, root)
	mods := System().Modules()
	slices.Sort(uses)
	slices.Sort(mods)
	if !slices.Equal(uses, mods) {
		t.Errorf("go.work uses %v, the registry's modules are %v: a module missing from one is never built or tested by make", uses, mods)
	}
}

func TestCommandsExist(t *testing.T) {
	root := repoRoot(t)
	for _, c := range System().Commands() {
		if _, err := os.Stat(filepath.Join(root, c, "main.go")); err != nil {
			t.Errorf("command %s: %v", c, err)
		}
	}
	for _, p := range Processes() {
		if _, err := os.Stat(filepath.Join(root, p.Module, "go.mod")); err != nil {
			t.Errorf("process %s: module %s: %v", p.Name, p.Module, err)
		}
		if got, want := p.ModuleCommand(), "./cmd/"+p.Name; got != want {
			t.Errorf("process %s: command %s inside its module, want %s (the Dockerfile builds ./cmd/<name>)", p.Name, got, want)
		}
	}
}

func TestParseRejects(t *testing.T) {
	good := func() string {
		raw, _ := os.ReadFile(FileName)
		return string(raw)
	}
	for _, tc := range []struct{ name, old, new, want string }{
		{"unknown field", `"database": true,`, `"databse": true,`, "unknown field"},
		{"port taken twice", `"port": 8082`, `"port": 8081`, "port 8081 is also identity's"},
		{"undeclared secret", `"CURSOR_KEY", "INGEST_TOKEN", "EVENTS_TOKEN"]`, `"CURSOR_KEY", "INGEST_TOKEN", "NEW_KEY"]`, "secret NEW_KEY is not declared"},
		{"no internal context keys", `["INTERNAL_CONTEXT_KEYS", "CURSOR_KEY"`, `["CURSOR_KEY"`, "every process needs INTERNAL_CONTEXT_KEYS"},
		{"upstream service twice", `"service": "orders"`, `"service": "identity"`, `gateway service "identity" is also identity`},
		{"command not named after the process", `"services/orders/cmd/orders"`, `"services/orders/cmd/orderd"`, "end in /orders"},
		{"upstream that needs Kubernetes", `"port": 8082,`, `"port": 8082, "kubernetes": true,`, "a process that needs Kubernetes cannot be"},
		{"call to a process declared later", `"port": 8081,`, `"port": 8081, "calls": ["orders"],`, `calls "orders", which is not a process declared before it`},
		{"call to an unknown process", `"calls": ["menus", "events"]`, `"calls": ["kitchen", "events"]`, `calls "kitchen", which is not a process declared before it`},
		{"call to a process that is not an upstream", `"calls": ["menus", "events"]`, `"calls": ["partneroperator", "events"]`, `calls "partneroperator", which is not an upstream`},
		{"call to itself", `"calls": ["events"],`, `"calls": ["orders"],`, `calls "orders", which is not a process declared before it`},
		{"bad url variable", `"urlEnv": "ORDERS_URL"`, `"urlEnv": "ORDERS"`, "upstream needs a service and a urlEnv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := good()
			if !strings.Contains(src, tc.old) {
				t.Fatalf("%s no longer contains %q: update this case", FileName, tc.old)
			}
			_, err := Parse([]byte(strings.Replace(src, tc.old, tc.new, 1)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse error = %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := Parse([]byte(good())); err != nil {
		t.Fatalf("the registry itself: %v", err)
	}
}

func TestCallsNameTheCalleesURL(t *testing.T) {
	raw, _ := os.ReadFile(FileName)
	src := strings.Replace(string(raw), `"calls": ["events"],`, `"calls": ["identity", "events"],`, 1)
	if src == string(raw) {
		t.Fatal(`processes.json no longer contains "calls": ["events"]: update this test`)
	}
	r, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	orders, _ := r.Get("orders")
	callees := r.Callees(orders)
	if len(callees) != 2 || callees[0].Name != "identity" || callees[0].Upstream.URLEnv != "IDENTITY_URL" ||
		callees[1].Name != "events" || callees[1].Upstream.URLEnv != "EVENTS_URL" {
		t.Fatalf("callees of orders = %+v, want identity (IDENTITY_URL) and events (EVENTS_URL)", callees)
	}
}
