// Package registry is the one declaration of the system's processes: their
// Go modules and commands, local ports, database, the gateway upstream each
// one is and the secrets each one needs. devstack, the end-to-end test, the
// load tests, the chart checks and the Makefile (through tools/cmd/registry)
// read it, so adding a process is one entry in processes.json, not an edit of
// every list. The file is plain JSON so a module that cannot import this one
// (the gateway's test holds its upstream variables to it) can read it too.
package registry

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// FileName is the registry file, beside this package's source.
const FileName = "processes.json"

//go:embed processes.json
var processesJSON []byte

// SecretForm says how devstack generates a local value of a secret.
type SecretForm string

const (
	// Keyring is an INTERNAL_CONTEXT_KEYS key ring: "kid:base64 32 bytes".
	Keyring SecretForm = "keyring"
	// Token is a URL-safe bearer token.
	Token SecretForm = "token"
	// Key is 32 random bytes, standard base64.
	Key SecretForm = "key"
)

// InternalContextKeys is the secret every process holds: the gateway signs
// the internal context with it, the services verify it.
const InternalContextKeys = "INTERNAL_CONTEXT_KEYS"

// Upstream is what a process is to the gateway.
type Upstream struct {
	// Service is the gateway's routes.Service value of the operations it owns.
	Service string `json:"service"`
	// URLEnv is the gateway's environment variable holding its base URL.
	URLEnv string `json:"urlEnv"`
}

// Process is one deployed binary. Its name is also its binary, its image
// (partnerapi/<name>), its chart (charts/<name>) and the key of its values in
// the umbrella chart.
type Process struct {
	Name string `json:"name"`
	// Module is the Go module directory, relative to the repository root.
	Module string `json:"module"`
	// Command is the main package, relative to the repository root, inside Module.
	Command string `json:"command"`
	// Port and InternalPort are the local listeners devstack gives it
	// (HTTP_ADDR and INTERNAL_HTTP_ADDR, plus --port-offset).
	Port         int `json:"port"`
	InternalPort int `json:"internalPort"`
	// Database: it owns a Postgres schema, reads DATABASE_URL and has a
	// "migrate" subcommand (the init container of its chart's Deployment).
	Database bool `json:"database,omitempty"`
	// Redis: it reads REDIS_URL.
	Redis bool `json:"redis,omitempty"`
	// PublicBaseURL: it reads PUBLIC_BASE_URL, the address partners use.
	PublicBaseURL bool `json:"publicBaseURL,omitempty"`
	// Gateway: the partners' entry point, which receives every upstream's URL.
	Gateway bool `json:"gateway,omitempty"`
	// Kubernetes: it works only against a Kubernetes API (an operator); devstack
	// does not start it, so `make run` never needs a cluster.
	Kubernetes bool `json:"kubernetes,omitempty"`
	// Upstream is set when the gateway forwards operations to it.
	Upstream *Upstream `json:"upstream,omitempty"`
	// Calls names the processes it calls directly (not through the gateway),
	// each declared before it and an upstream: it reads each one's base URL
	// from that process's upstream URL variable (calls ["menus"]: MENUS_URL).
	Calls []string `json:"calls,omitempty"`
	// Asks names processes it calls for what it can do without (identity
	// asks events for the connected-apps page's activity, and its outbox
	// waits for events to forward revocations): upstreams too,
	// read from their URL variable like calls, but in any start order, so
	// two processes may reach each other.
	Asks []string `json:"asks,omitempty"`
	// Secrets are the secret environment variables it needs besides
	// DATABASE_URL and REDIS_URL.
	Secrets []string `json:"secrets"`
}

// Image is the repository of its container image, without registry.
func (p Process) Image() string { return "partnerapi/" + p.Name }

// ChartDir is its chart's directory, relative to the repository root.
func (p Process) ChartDir() string { return "charts/" + p.Name }

// ModuleCommand is Command relative to Module, as "./cmd/<name>".
func (p Process) ModuleCommand() string { return "./" + strings.TrimPrefix(p.Command, p.Module+"/") }

// ChartSecretKeys are the keys its chart's secret.keys must list: its secrets
// other than INTERNAL_CONTEXT_KEYS (shared, handled apart by the charts),
// DATABASE_URL and REDIS_URL when it uses them.
func (p Process) ChartSecretKeys() []string {
	var keys []string
	if p.Database {
		keys = append(keys, "DATABASE_URL")
	}
	if p.Redis {
		keys = append(keys, "REDIS_URL")
	}
	for _, s := range p.Secrets {
		if s != InternalContextKeys {
			keys = append(keys, s)
		}
	}
	return keys
}

// Registry is the whole declaration.
type Registry struct {
	// SharedModules are Go modules of shared code, built and tested like the others.
	SharedModules []string `json:"sharedModules"`
	// ToolsModule holds devstack, seed, loadgen and the checks.
	ToolsModule string `json:"toolsModule"`
	// ExtraCommands are binaries built into bin/ beside the processes.
	ExtraCommands []string `json:"extraCommands"`
	// Secrets are every secret a process may list, with how to generate a local value.
	Secrets map[string]SecretForm `json:"secrets"`
	// Processes in start order: the gateway comes last and stops first.
	Processes []Process `json:"processes"`
}

var system = mustParse(processesJSON)

func mustParse(data []byte) Registry {
	r, err := Parse(data)
	if err != nil {
		panic(fmt.Sprintf("tools/registry/%s: %v", FileName, err))
	}
	return r
}

// System is the registry of this repository.
func System() Registry {
	r := system
	r.Processes = slices.Clone(r.Processes)
	return r
}

// Processes of the system in start order.
func Processes() []Process { return slices.Clone(system.Processes) }

// Get returns the process named name.
func (r Registry) Get(name string) (Process, bool) {
	i := slices.IndexFunc(r.Processes, func(p Process) bool { return p.Name == name })
	if i < 0 {
		return Process{}, false
	}
	return r.Processes[i], true
}

// Gateway is the partners' entry point.
func (r Registry) Gateway() Process {
	p, _ := r.find(func(p Process) bool { return p.Gateway })
	return p
}

func (r Registry) find(f func(Process) bool) (Process, bool) {
	i := slices.IndexFunc(r.Processes, f)
	if i < 0 {
		return Process{}, false
	}
	return r.Processes[i], true
}

// Upstreams are the processes the gateway forwards to, in start order.
func (r Registry) Upstreams() []Process {
	var out []Process
	for _, p := range r.Processes {
		if p.Upstream != nil {
			out = append(out, p)
		}
	}
	return out
}

// Callees are the processes p calls or asks, in p's order.
func (r Registry) Callees(p Process) []Process {
	var out []Process
	for _, name := range slices.Concat(p.Calls, p.Asks) {
		if c, ok := r.Get(name); ok {
			out = append(out, c)
		}
	}
	return out
}

// Modules are every Go module: shared ones, each process's, then the tools.
func (r Registry) Modules() []string {
	out := slices.Clone(r.SharedModules)
	for _, p := range r.Processes {
		if !slices.Contains(out, p.Module) {
			out = append(out, p.Module)
		}
	}
	return append(out, r.ToolsModule)
}

// Commands are the main packages built into bin/, as "./<path>".
func (r Registry) Commands() []string {
	var out []string
	for _, p := range r.Processes {
		out = append(out, "./"+p.Command)
	}
	for _, c := range r.ExtraCommands {
		out = append(out, "./"+c)
	}
	return out
}

var (
	processName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,30}[a-z0-9]$`)
	envName     = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
)

// Parse decodes a registry strictly and checks that it holds together.
func Parse(data []byte) (Registry, error) {
	var r Registry
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Registry{}, err
	}
	return r, r.validate()
}

func (r Registry) validate() error {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	for name, form := range r.Secrets {
		if !envName.MatchString(name) {
			bad("secret %q is not an environment variable name", name)
		}
		if form != Keyring && form != Token && form != Key {
			bad("secret %s: form %q, want keyring, token or key", name, form)
		}
	}
	if r.ToolsModule == "" {
		bad("no toolsModule")
	}
	names, ports, services, envs := map[string]bool{}, map[int]string{}, map[string]string{}, map[string]string{}
	gateways := 0
	for i, p := range r.Processes {
		id := fmt.Sprintf("process %d (%s)", i, p.Name)
		if !processName.MatchString(p.Name) {
			bad("%s: name must be a DNS label of lower-case letters, digits and dashes", id)
		}
		if names[p.Name] {
			bad("%s: declared twice", id)
		}
		names[p.Name] = true
		if p.Module == "" || path.Clean(p.Module) != p.Module || strings.HasPrefix(p.Module, ".") {
			bad("%s: module %q is not a clean path relative to the repository root", id, p.Module)
		}
		if !strings.HasPrefix(p.Command, p.Module+"/") || path.Base(p.Command) != p.Name {
			bad("%s: command %q must be inside module %s and end in /%s (the binary is named after the process)", id, p.Command, p.Module, p.Name)
		}
		for _, port := range []int{p.Port, p.InternalPort} {
			if port < 1024 || port > 65535 {
				bad("%s: port %d outside 1024..65535", id, port)
			} else if other, taken := ports[port]; taken {
				bad("%s: port %d is also %s's", id, port, other)
			}
			ports[port] = p.Name
		}
		if p.Kubernetes && (p.Gateway || p.Upstream != nil || p.Database) {
			bad("%s: a process that needs Kubernetes cannot be the gateway, an upstream or own a database: devstack does not start it", id)
		}
		if p.Gateway {
			gateways++
			if p.Upstream != nil {
				bad("%s: the gateway is nobody's upstream", id)
			}
		}
		if u := p.Upstream; u != nil {
			if u.Service == "" || !envName.MatchString(u.URLEnv) || !strings.HasSuffix(u.URLEnv, "_URL") {
				bad("%s: upstream needs a service and a urlEnv like ORDERS_URL, got %+v", id, *u)
			}
			if other, taken := services[u.Service]; taken {
				bad("%s: gateway service %q is also %s", id, u.Service, other)
			}
			if other, taken := envs[u.URLEnv]; taken {
				bad("%s: %s is also %s's URL", id, u.URLEnv, other)
			}
			services[u.Service], envs[u.URLEnv] = p.Name, p.Name
		}
		for _, name := range p.Calls {
			callee, declared := r.Get(name)
			switch {
			case !declared || !names[name] || name == p.Name:
				bad("%s: calls %q, which is not a process declared before it (callees start first)", id, name)
			case callee.Upstream == nil || callee.Gateway || callee.Kubernetes:
				bad("%s: calls %q, which is not an upstream: its URL variable is its upstream's urlEnv", id, name)
			case p.Gateway:
				bad("%s: the gateway reaches its upstreams through upstream, not calls", id)
			}
		}
		for _, name := range p.Asks {
			callee, declared := r.Get(name)
			switch {
			case !declared || name == p.Name || slices.Contains(p.Calls, name):
				bad("%s: asks %q, which is not another declared process it does not already call", id, name)
			case callee.Upstream == nil || callee.Gateway || callee.Kubernetes:
				bad("%s: asks %q, which is not an upstream: its URL variable is its upstream's urlEnv", id, name)
			}
		}
		if !slices.Contains(p.Secrets, InternalContextKeys) {
			bad("%s: every process needs %s", id, InternalContextKeys)
		}
		for _, s := range p.Secrets {
			if _, ok := r.Secrets[s]; !ok {
				bad("%s: secret %s is not declared in secrets (with how devstack generates it)", id, s)
			}
		}
	}
	if gateways != 1 {
		bad("%d processes are the gateway, want exactly one", gateways)
	}
	if len(r.Processes) > 0 && !r.Processes[len(r.Processes)-1].Gateway {
		bad("the gateway must come last: it starts after its upstreams and stops first")
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// UmbrellaChart installs every process in one release.
const UmbrellaChart = "charts/restaurant-partner-api"
