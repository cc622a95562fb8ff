package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"partnerapi.dev/pkg/localinfra"
)

// balancer plays a Kubernetes Service in front of a service's replicas:
// like kube-proxy it works per TCP connection, sending each new connection
// to a replica whose /readyz answered 200 at its last probe (every 50 ms),
// in turn, and to the next one when a replica refuses it. A kept-alive
// connection stays on its replica until either side closes it.
type balancer struct {
	ln       net.Listener
	mu       sync.Mutex
	backends []*backend
	turn     int
}

// backend is one replica: its public address and its readiness.
type backend struct {
	addr   string
	ready  atomic.Bool
	cancel context.CancelFunc
}

func startBalancer() (*balancer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &balancer{ln: ln}
	go b.serve()
	return b, nil
}

func (b *balancer) url() string { return "http://" + b.ln.Addr().String() }

func (b *balancer) close() {
	b.ln.Close()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, be := range b.backends {
		be.cancel()
	}
}

// add puts a replica behind the balancer and probes its readiness at
// internal (its internal listener's base URL) until removed.
func (b *balancer) add(public, internal string) {
	ctx, cancel := context.WithCancel(context.Background())
	be := &backend{addr: strings.TrimPrefix(public, "http://"), cancel: cancel}
	client := &http.Client{Timeout: 200 * time.Millisecond}
	probe := func() {
		res, err := client.Get(internal + "/readyz")
		ok := err == nil && res.StatusCode == http.StatusOK
		if err == nil {
			res.Body.Close()
		}
		be.ready.Store(ok)
	}
	probe()
	go func() {
		for ctx.Err() == nil {
			sleep(ctx, 50*time.Millisecond)
			probe()
		}
	}()
	b.mu.Lock()
	b.backends = append(b.backends, be)
	b.mu.Unlock()
}

// remove takes a replica out (its connections stay until they close).
func (b *balancer) remove(public string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, be := range b.backends {
		if be.addr == strings.TrimPrefix(public, "http://") {
			be.cancel()
			b.backends = append(b.backends[:i], b.backends[i+1:]...)
			return
		}
	}
}

// ready is the ready replicas, starting with the next one's turn.
func (b *balancer) ready() []*backend {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.turn++
	var out []*backend
	for i := range b.backends {
		be := b.backends[(b.turn+i)%len(b.backends)]
		if be.ready.Load() {
			out = append(out, be)
		}
	}
	return out
}

func (b *balancer) serve() {
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		go b.pipe(c)
	}
}

func (b *balancer) pipe(c net.Conn) {
	defer c.Close()
	var up net.Conn
	for _, be := range b.ready() {
		var err error
		if up, err = net.DialTimeout("tcp", be.addr, time.Second); err == nil {
			break
		}
	}
	if up == nil {
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); _ = up.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); _ = c.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
	<-done
	<-done
}

// replica is a second instance of a service: the same binary and
// environment as devstack's, on other ports.
type replica struct {
	cmd              *exec.Cmd
	public, internal string
	exited           chan error
}

// startReplica starts another instance of devstack's child name, with its
// environment (read off /proc) and free ports, and waits until it is ready.
func startReplica(ctx context.Context, devstack int, bin, name string) (*replica, error) {
	pid, err := childPID(devstack, name)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return nil, err
	}
	port, err := localinfra.FreePort()
	if err != nil {
		return nil, err
	}
	internalPort, err := localinfra.FreePort()
	if err != nil {
		return nil, err
	}
	r := &replica{public: fmt.Sprintf("http://127.0.0.1:%d", port), internal: fmt.Sprintf("http://127.0.0.1:%d", internalPort), exited: make(chan error, 1)}
	var env []string
	for _, kv := range strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00") {
		if !strings.HasPrefix(kv, "HTTP_ADDR=") && !strings.HasPrefix(kv, "INTERNAL_HTTP_ADDR=") {
			env = append(env, kv)
		}
	}
	r.cmd = exec.Command(filepath.Join(bin, name))
	r.cmd.Env = append(env, fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", port), fmt.Sprintf("INTERNAL_HTTP_ADDR=127.0.0.1:%d", internalPort))
	r.cmd.Stdout, r.cmd.Stderr = os.Stderr, os.Stderr
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { r.exited <- r.cmd.Wait() }()
	if err := waitReady(ctx, r.internal); err != nil {
		_ = r.cmd.Process.Kill()
		return nil, err
	}
	return r, nil
}

// stop sends SIGTERM, as a rollout stops a pod, and waits for the drain.
func (r *replica) stop() error {
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case err := <-r.exited:
		return err
	case <-time.After(30 * time.Second):
		_ = r.cmd.Process.Kill()
		return fmt.Errorf("%s replica still running 30 s after SIGTERM", r.public)
	}
}

// rollingRestart is the fault of a rollout with two replicas behind the
// balancer: a second replica starts and becomes ready, devstack's is
// stopped with SIGTERM while serving (devstack starts it again, as the
// rollout's new pod); at the recovery, once that one is ready, the second
// replica is stopped the same way.
type rollingRestart struct {
	ctx      context.Context
	bal      *balancer
	devstack func() int
	bin      string
	name     string
	internal string // devstack's replica's internal base URL
	second   *replica
}

func (rr *rollingRestart) inject() error {
	r, err := startReplica(rr.ctx, rr.devstack(), rr.bin, rr.name)
	if err != nil {
		return err
	}
	rr.second = r
	rr.bal.add(r.public, r.internal)
	for !rr.ready(r.public) {
		sleep(rr.ctx, 20*time.Millisecond)
	}
	return terminate(rr.devstack(), rr.name)
}

func (rr *rollingRestart) recover() error {
	if err := waitReady(rr.ctx, rr.internal); err != nil {
		return err
	}
	sleep(rr.ctx, 100*time.Millisecond) // the balancer's probe sees it
	err := rr.second.stop()
	rr.bal.remove(rr.second.public)
	return err
}

func (rr *rollingRestart) ready(public string) bool {
	for _, be := range rr.bal.ready() {
		if be.addr == strings.TrimPrefix(public, "http://") {
			return true
		}
	}
	return false
}
