// Package system starts the whole system for the tests and measurements
// that call it from outside (e2e, oauthinterop, faults, loadgen): it builds
// every process the registry lists, runs bin/devstack at free ports and
// describes what is running, its URLs, demo tokens and secrets.
package system

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"partnerapi.dev/tools/registry"
)

// SecretsFile is the file in devstack's --data folder that holds its
// generated secrets, KEY=value a line (ReadSecrets).
const SecretsFile = "secrets.env"

// Stack is a running bin/devstack.
type Stack struct {
	// Gateway, Identity and Orders are the public base URLs of those processes.
	Gateway, Identity, Orders string
	// Public and Internal are the base URLs of every registered process's
	// public and internal (metrics; identity's admin API) listeners, by
	// process name.
	Public, Internal map[string]string
	// Token is the demo owner's access token devstack printed (restaurant
	// boundary), OrgToken the organization admin's (organization boundary).
	Token, OrgToken string
	// Welcome is everything devstack printed once ready.
	Welcome string
	// Secrets are devstack's generated secrets (SecretsFile).
	Secrets map[string]string

	cmd    *exec.Cmd
	logs   *syncBuffer
	exited chan error
}

// Options says how to start devstack.
type Options struct {
	Bin  string   // folder with the built binaries
	Dir  string   // devstack's --data folder
	Env  []string // devstack's whole environment (children inherit it); nil: this process's
	Wait time.Duration
	// Upstreams, name to URL: the other processes reach the named process
	// at URL (a load balancer in front of its replicas), devstack's
	// --upstream.
	Upstreams map[string]string
}

// Build compiles into dir what the system's tests run: every registered
// process (Start runs those devstack starts; the chart checks run every
// process's check-config), each module on its own (GOWORK=off) as a team
// would build it, and devstack, seed and partnerctl. root is the
// repository's root folder. One go build per module links that module's
// commands side by side.
func Build(root, dir string) error {
	commands := map[string][]string{
		"services/identity": {"./cmd/partnerctl"},
		"tools":             {"./cmd/devstack", "./cmd/seed"},
	}
	modules := []string{"services/identity", "tools"}
	for _, p := range registry.Processes() {
		if _, ok := commands[p.Module]; !ok {
			modules = append(modules, p.Module)
		}
		commands[p.Module] = append(commands[p.Module], p.ModuleCommand())
	}
	for _, m := range modules {
		cmd := exec.Command("go", append([]string{"build", "-o", dir + string(filepath.Separator)}, commands[m]...)...)
		cmd.Dir = filepath.Join(root, m)
		cmd.Env = append(os.Environ(), "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s %v: %w\n%s", m, commands[m], err, out)
		}
	}
	return nil
}

// Start starts bin/devstack run at a free port offset and waits until it
// printed the demo token and "Press Ctrl-C to stop.".
func Start(ctx context.Context, o Options) (*Stack, error) {
	offset, err := freeOffset()
	if err != nil {
		return nil, err
	}
	if o.Wait == 0 {
		o.Wait = 4 * time.Minute
	}
	args := []string{"run", "--data", o.Dir, "--bin", o.Bin, "--port-offset", fmt.Sprint(offset)}
	for name, u := range o.Upstreams {
		args = append(args, "--upstream", name+"="+u)
	}
	cmd := exec.Command(filepath.Join(o.Bin, "devstack"), args...)
	cmd.Env = o.Env
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	// Stacks of parallel test packages may share one Redis: each counts
	// its rate limits apart (an env var given in o.Env comes later and wins).
	cmd.Env = append([]string{fmt.Sprintf("RATE_LIMIT_KEY_PREFIX=stack-%d-%d:", offset, time.Now().UnixNano())}, cmd.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGINT}
	s := &Stack{Public: map[string]string{}, Internal: map[string]string{}, cmd: cmd, logs: &syncBuffer{}, exited: make(chan error, 1)}
	for _, p := range registry.Processes() {
		if p.Kubernetes {
			continue // devstack does not start it
		}
		s.Public[p.Name] = fmt.Sprintf("http://127.0.0.1:%d", p.Port+offset)
		s.Internal[p.Name] = fmt.Sprintf("http://127.0.0.1:%d", p.InternalPort+offset)
	}
	s.Gateway, s.Identity, s.Orders = s.Public[registry.System().Gateway().Name], s.Public["identity"], s.Public["orders"]
	cmd.Stderr = s.logs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start devstack (run make build first): %w", err)
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		s.exited <- cmd.Wait()
	}()
	timeout := time.After(o.Wait)
	var welcome strings.Builder
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				return nil, fmt.Errorf("devstack exited before it was ready:\n%s", s.Logs())
			}
			welcome.WriteString(line + "\n")
			if v, found := strings.CutPrefix(strings.TrimSpace(line), "export TOKEN="); found {
				s.Token = v
			}
			if v, found := strings.CutPrefix(strings.TrimSpace(line), "export ORG_TOKEN="); found {
				s.OrgToken = v
			}
			if strings.HasPrefix(line, "Press Ctrl-C") {
				s.Welcome = welcome.String()
				go func() {
					for range lines { // keep draining
					}
				}()
				if s.Token == "" {
					s.Stop()
					return nil, fmt.Errorf("devstack printed no demo token:\n%s", s.Logs())
				}
				if s.Secrets, err = ReadSecrets(filepath.Join(o.Dir, SecretsFile)); err != nil {
					s.Stop()
					return nil, err
				}
				return s, nil
			}
		case <-timeout:
			s.Stop()
			return nil, fmt.Errorf("devstack not ready after %s:\n%s", o.Wait, s.Logs())
		case <-ctx.Done():
			s.Stop()
			return nil, ctx.Err()
		}
	}
}

// PID is devstack's process id (its processes are its children).
func (s *Stack) PID() int { return s.cmd.Process.Pid }

// Logs is what devstack and its children wrote to stderr so far.
func (s *Stack) Logs() string { return s.logs.String() }

// Stop interrupts devstack (it stops its processes, Redis and Postgres),
// waits up to 60 s, and reports on stderr when it did not stop cleanly.
func (s *Stack) Stop() {
	if err := s.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "%v; its last log lines:\n%s\n", err, tail(s.Logs(), 2000))
	}
}

// Close is Stop returning what went wrong instead of printing it.
func (s *Stack) Close() error {
	if s == nil || s.cmd.Process == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-s.exited:
		if err != nil {
			return fmt.Errorf("devstack stopped with %w", err)
		}
		return nil
	case <-time.After(60 * time.Second):
		_ = s.cmd.Process.Kill()
		return errors.New("devstack did not stop within 60 s; killed")
	}
}

// ReadSecrets reads a KEY=value file such as devstack's SecretsFile.
func ReadSecrets(path string) (map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m, nil
}

// freeOffset finds a port offset at which every registered process's public
// and internal ports + offset are free.
func freeOffset() (int, error) {
	var ports []int
	for _, p := range registry.Processes() {
		ports = append(ports, p.Port, p.InternalPort)
	}
	lowest := slices.Min(ports)
	for offset := 23000 - lowest + os.Getpid()%1000; offset+slices.Max(ports) < 65000; offset += 97 {
		ok := true
		for _, port := range ports {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port+offset))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return offset, nil
		}
	}
	return 0, errors.New("no free ports")
}

// Claims are the access-token claims a signed internal context repeats.
type Claims struct {
	Subject  string `json:"sub"`
	ClientID string `json:"client_id"`
	GrantID  string `json:"gid"`
	Scope    string `json:"scope"`
	Expiry   int64  `json:"exp"` // Unix seconds
}

// TokenClaims decodes (without verifying) the payload of a JWT.
func TokenClaims(token string) (Claims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return Claims{}, errors.New("access token is not a JWT")
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return Claims{}, fmt.Errorf("access token payload: %w", err)
	}
	var c Claims
	if err := json.Unmarshal(raw, &c); err != nil {
		return Claims{}, fmt.Errorf("access token payload: %w", err)
	}
	if c.GrantID == "" || c.Subject == "" || c.ClientID == "" {
		return Claims{}, errors.New("access token lacks sub, client_id or gid")
	}
	return c, nil
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() > 4<<20 { // keep the recent part only
		tail := append([]byte(nil), s.b.Bytes()[s.b.Len()-1<<20:]...)
		s.b.Reset()
		s.b.Write(tail)
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
