// Package jaeger builds, from the Go module proxy, the Jaeger v2 backend (an
// OpenTelemetry collector distribution with in-memory storage and a query API)
// and runs it on loopback ports, so tests and make run can look at what the
// processes export the way an operator's tracing backend would.
//
// The binary is built on first use, under a lock file, into
//
//	${XDG_CACHE_HOME:-$HOME/.cache}/partnerapi/jaeger/<Version>/jaeger
//
// (or $PARTNERAPI_JAEGER_CACHE/<Version>/jaeger). A cold build takes about four minutes
// and 120 MB; afterwards Binary only checks that the file exists. Built this way its web
// UI is a placeholder; the query API is complete.
package jaeger

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"partnerapi.dev/tools/envtest"
)

// Version is the github.com/jaegertracing/jaeger module version built.
const Version = "v1.76.0"

// CacheDir is the directory holding (or about to hold) the binary of Version.
func CacheDir() (string, error) {
	base := os.Getenv("PARTNERAPI_JAEGER_CACHE")
	if base == "" {
		c := os.Getenv("XDG_CACHE_HOME")
		if c == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("jaeger cache: no XDG_CACHE_HOME and no home directory: %w", err)
			}
			c = filepath.Join(home, ".cache")
		}
		base = filepath.Join(c, "partnerapi", "jaeger")
	}
	return filepath.Join(base, Version), nil
}

// Cached reports whether the binary is already built.
func Cached() bool {
	dir, err := CacheDir()
	if err != nil {
		return false
	}
	st, err := os.Stat(filepath.Join(dir, "jaeger"))
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

// goMod is the throwaway module Jaeger is built in: its own go.mod's replace
// does not apply to a dependency, so it is repeated here.
const goMod = `module partnerapi.dev/tracing/jaeger

go 1.26.0

require github.com/jaegertracing/jaeger ` + Version + `

replace github.com/Shopify/sarama => github.com/Shopify/sarama v1.33.0
`

const toolsGo = `//go:build tools

package tools

import _ "github.com/jaegertracing/jaeger/cmd/jaeger"
`

// Binary returns the path of the jaeger binary, building it first when it is
// missing (progress to log; nil means os.Stderr).
func Binary(ctx context.Context, log io.Writer) (string, error) {
	dir, err := CacheDir()
	if err != nil {
		return "", err
	}
	return envtest.BuildTool(ctx, dir, "jaeger", log, map[string]string{"go.mod": goMod, "tools.go": toolsGo},
		"github.com/jaegertracing/jaeger/cmd/jaeger", "")
}

// config keeps everything on loopback: OTLP over HTTP in, traces in memory,
// the query API out; Jaeger's own telemetry off.
const config = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
  jaeger_query:
    storage:
      traces: memstore
    enable_tracing: false
    http:
      endpoint: %s
    grpc:
      endpoint: %s
receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`

// Server is a running Jaeger.
type Server struct {
	// OTLP is the base URL to export to (OTEL_EXPORTER_OTLP_ENDPOINT).
	OTLP string
	// Query is the base URL of the query API (GET /api/traces?service=…).
	Query string

	cmd  *exec.Cmd
	logs *lockedBuffer
	done chan struct{}
}

// Start runs bin on free loopback ports, its configuration in dir, and waits
// until its query API answers.
func Start(ctx context.Context, bin, dir string) (*Server, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	addr := func(p int) string { return fmt.Sprintf("127.0.0.1:%d", p) }
	cfg := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(config, addr(ports[0]), addr(ports[1]), addr(ports[2]))), 0o644); err != nil {
		return nil, err
	}
	s := &Server{OTLP: "http://" + addr(ports[2]), Query: "http://" + addr(ports[0]), logs: &lockedBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(bin, "--config", cfg)
	// Its own exporter settings must not point it at itself.
	s.cmd.Env = withoutOTEL(os.Environ())
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get(s.Query + "/api/services")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("jaeger exited:\n%s", s.Logs())
		case <-ctx.Done():
			_ = s.Close()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = s.Close()
			return nil, fmt.Errorf("jaeger's query API did not answer within a minute:\n%s", s.Logs())
		}
	}
}

// Logs is what Jaeger printed.
func (s *Server) Logs() string { return s.logs.String() }

// Close stops Jaeger.
func (s *Server) Close() error {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	return nil
}

// Trace is one trace as the query API answers it.
type Trace struct {
	TraceID   string             `json:"traceID"`
	Spans     []Span             `json:"spans"`
	Processes map[string]Process `json:"processes"`
}

// Span is one span of a Trace.
type Span struct {
	TraceID       string      `json:"traceID"`
	SpanID        string      `json:"spanID"`
	OperationName string      `json:"operationName"`
	References    []Reference `json:"references"`
	Tags          []KeyValue  `json:"tags"`
	Logs          []struct {
		Fields []KeyValue `json:"fields"`
	} `json:"logs"`
	ProcessID string `json:"processID"`
}

// Reference is a span's parent (CHILD_OF) or link (FOLLOWS_FROM).
type Reference struct {
	RefType string `json:"refType"`
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
}

// KeyValue is a tag or a log field.
type KeyValue struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// Process is the service a span came from.
type Process struct {
	ServiceName string     `json:"serviceName"`
	Tags        []KeyValue `json:"tags"`
}

// Tag is the value of a span's tag key as text, and whether it has it.
func (s Span) Tag(key string) (string, bool) {
	for _, t := range s.Tags {
		if t.Key == key {
			return fmt.Sprint(t.Value), true
		}
	}
	return "", false
}

// Services lists the services that exported spans.
func (s *Server) Services(ctx context.Context) ([]string, error) {
	var out struct{ Data []string }
	return out.Data, s.get(ctx, "/api/services", &out)
}

// Traces answers the traces with a span of service started in the last
// lookback (at most limit).
func (s *Server) Traces(ctx context.Context, service string, lookback time.Duration, limit int) ([]Trace, error) {
	q := url.Values{"service": {service}, "lookback": {lookback.String()}, "limit": {fmt.Sprint(limit)}}
	var out struct{ Data []Trace }
	return out.Data, s.get(ctx, "/api/traces?"+q.Encode(), &out)
}

func (s *Server) get(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.Query+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("jaeger GET %s: %d %.300s", path, resp.StatusCode, body)
	}
	return json.Unmarshal(body, out)
}

func withoutOTEL(env []string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, "OTEL_") {
			out = append(out, e)
		}
	}
	return out
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
