// Package localinfra starts Postgres and Redis servers from the binaries
// installed on the machine, for tests (throwaway, in a temp dir) and for the
// local development stack (data kept in a folder). No containers, no downloads.
package localinfra

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is a running child process.
type Server struct {
	// URL is how clients connect.
	URL  string
	cmd  *exec.Cmd
	done chan struct{}
	sig  syscall.Signal
}

// Stop asks the server to shut down and waits up to 15 s.
func (s *Server) Stop() error {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(s.sig)
	select {
	case <-s.done:
		return nil
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		return errors.New("server did not stop in time; killed")
	}
}

// Kill ends the server and its process group at once (SIGKILL), as a crash
// does, and waits for it.
func (s *Server) Kill() error {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
	return nil
}

// Exited is closed when the server process ends.
func (s *Server) Exited() <-chan struct{} { return s.done }

// PostgresOptions tunes StartPostgres.
type PostgresOptions struct {
	// Dir holds the data directory; it is created with initdb when empty and
	// reused otherwise.
	Dir string
	// Port is the TCP port on 127.0.0.1; 0 picks a free one.
	Port int
	// Durable keeps fsync on (development data); tests turn it off for speed.
	Durable bool
	// Log receives the server's output; nil writes Dir/postgres.log.
	LogPath string
	// SharedBuffers is Postgres's shared_buffers (such as "6GB"); empty is 256MB.
	SharedBuffers string
}

// StartPostgres starts a postgres server as a child process. When running as
// root it runs as the "postgres" user, since Postgres refuses root.
func StartPostgres(ctx context.Context, o PostgresOptions) (*Server, error) {
	bin, err := postgresBinDir()
	if err != nil {
		return nil, err
	}
	cred, uid, gid, err := postgresCredential()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, err
	}
	if cred != nil {
		if err := chownTree(o.Dir, uid, gid); err != nil {
			return nil, err
		}
		// The postgres user must be able to reach the data directory.
		for d := filepath.Dir(o.Dir); d != "/" && d != "."; d = filepath.Dir(d) {
			if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
				_ = os.Chmod(d, fi.Mode().Perm()|0o011)
			}
		}
	}
	data := filepath.Join(o.Dir, "data")
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); err != nil {
		initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
		initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		if out, err := initdb.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("initdb: %w: %s", err, out)
		}
	}
	logPath := o.LogPath
	if logPath == "" {
		logPath = filepath.Join(o.Dir, "postgres.log")
	}
	return onFreePort(o.Port, func(port int) (*Server, error) {
		return startPostgres(ctx, o, filepath.Join(bin, "postgres"), cred, data, port, logPath)
	})
}

func startPostgres(ctx context.Context, o PostgresOptions, postgres string, cred *syscall.Credential, data string, port int, logPath string) (*Server, error) {
	args := []string{"-D", data, "-p", strconv.Itoa(port), "-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=", "-c", "max_connections=400", "-c", "shared_buffers=" + cmp.Or(o.SharedBuffers, "256MB")}
	if !o.Durable {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	logStart, _ := logf.Seek(0, io.SeekEnd)
	cmd := exec.Command(postgres, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// SIGINT is Postgres's fast shutdown; the server also dies with us.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGINT, Setpgid: true}
	s, err := start(cmd, syscall.SIGINT, logf)
	if err != nil {
		return nil, err
	}
	s.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	if err := waitPostgres(ctx, s, data, 60*time.Second); err != nil {
		_ = s.Stop()
		if portTaken(logPath, logStart) {
			err = ErrPortTaken
		}
		return nil, fmt.Errorf("postgres did not start on port %d (see %s): %w", port, logPath, err)
	}
	return s, nil
}

// ErrPortTaken is a server's start failing because another process listens
// on its port.
var ErrPortTaken = errors.New("another process listens on the port")

// onFreePort starts a server on port, or when port is 0 on a free one: a
// port found free can be taken before the server binds it, so a start that
// loses its port tries another, a few times.
func onFreePort(port int, start func(port int) (*Server, error)) (*Server, error) {
	for attempt := 1; ; attempt++ {
		p := port
		if p == 0 {
			var err error
			if p, err = FreePort(); err != nil {
				return nil, err
			}
		}
		s, err := start(p)
		if port != 0 || attempt == 3 || !errors.Is(err, ErrPortTaken) {
			return s, err
		}
	}
}

// portTaken reports whether the log, from offset on, says the server could
// not bind its address (Postgres and Redis both print the system's message).
func portTaken(logPath string, offset int64) bool {
	b, err := os.ReadFile(logPath)
	if err != nil || offset > int64(len(b)) {
		return false
	}
	return bytes.Contains(b[offset:], []byte("Address already in use"))
}

// RedisOptions tunes StartRedis.
type RedisOptions struct {
	Dir     string
	Port    int
	Durable bool
	// Args are more redis-server arguments (a cluster node's, a replica's).
	Args []string
}

// StartRedis starts redis-server as a child process.
func StartRedis(ctx context.Context, o RedisOptions) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New("redis-server is not installed (Debian package redis-server); or set REDIS_URL")
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	return onFreePort(o.Port, func(port int) (*Server, error) { return startRedis(ctx, o, bin, port) })
}

func startRedis(ctx context.Context, o RedisOptions, bin string, port int) (*Server, error) {
	logPath := filepath.Join(o.Dir, "redis.log")
	var logStart int64
	if fi, err := os.Stat(logPath); err == nil {
		logStart = fi.Size()
	}
	args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", o.Dir, "--daemonize", "no",
		"--logfile", logPath, "--protected-mode", "yes"}
	if o.Durable {
		args = append(args, "--appendonly", "yes", "--save", "60 1")
	} else {
		args = append(args, "--appendonly", "no", "--save", "")
	}
	args = append(args, o.Args...)
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	s, err := start(cmd, syscall.SIGTERM, nil)
	if err != nil {
		return nil, err
	}
	s.URL = fmt.Sprintf("redis://127.0.0.1:%d/0", port)
	if err := waitRedis(ctx, s, port, 15*time.Second); err != nil {
		_ = s.Stop()
		if portTaken(logPath, logStart) {
			err = ErrPortTaken
		}
		return nil, fmt.Errorf("redis did not start on port %d: %w", port, err)
	}
	return s, nil
}

func start(cmd *exec.Cmd, sig syscall.Signal, closeAfter *os.File) (*Server, error) {
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", filepath.Base(cmd.Path), err)
	}
	s := &Server{cmd: cmd, done: make(chan struct{}), sig: sig}
	go func() {
		_ = cmd.Wait()
		if closeAfter != nil {
			_ = closeAfter.Close()
		}
		close(s.done)
	}()
	return s, nil
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitPostgres waits until the server accepts sessions (it accepts TCP
// connections earlier, while still recovering or starting up) and checks
// that the server answering is this one, by its data directory: another
// server on the port is ErrPortTaken.
func waitPostgres(ctx context.Context, s *Server, data string, limit time.Duration) error {
	want, err := filepath.Abs(data)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(limit)
	var lastErr error
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return errors.New("process exited")
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		var got string
		conn, err := pgx.Connect(cctx, s.URL)
		if err == nil {
			err = conn.QueryRow(cctx, "SHOW data_directory").Scan(&got)
			_ = conn.Close(ctx)
		}
		cancel()
		switch {
		case err == nil && filepath.Clean(got) != want:
			return ErrPortTaken
		case err == nil:
			return nil
		}
		lastErr = err
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("timed out: %w", lastErr)
}

// waitRedis waits until the server answers and checks that it is this one,
// by its process id: another server on the port is ErrPortTaken.
func waitRedis(ctx context.Context, s *Server, port int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var lastErr error
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return errors.New("process exited")
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		info, err := redisInfo(port)
		if err == nil {
			if !strings.Contains(info, fmt.Sprintf("\nprocess_id:%d\r", s.cmd.Process.Pid)) {
				return ErrPortTaken
			}
			return nil
		}
		lastErr = err
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("timed out: %w", lastErr)
}

// redisInfo asks the Redis server on port for INFO server, in the protocol's
// own terms (a command array, a bulk string back), which is all waitRedis
// needs of a client.
func redisInfo(port int) (string, error) {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := io.WriteString(c, "*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n"); err != nil {
		return "", err
	}
	r := bufio.NewReader(c)
	head, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(head, "$")))
	if !strings.HasPrefix(head, "$") || err != nil || n < 0 {
		return "", fmt.Errorf("INFO answered %q", strings.TrimSpace(head))
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return "", err
	}
	return string(body), nil
}

// postgresBinDir finds initdb and postgres: on PATH, or Debian's
// /usr/lib/postgresql/<version>/bin (newest first).
func postgresBinDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		dir := filepath.Dir(p)
		if real, err := filepath.EvalSymlinks(p); err == nil {
			dir = filepath.Dir(real)
		}
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("postgres binaries not found (install Debian package postgresql), or set DATABASE_URL")
}

func versionOf(dir string) int {
	v, _ := strconv.Atoi(strings.Split(strings.TrimPrefix(dir, "/usr/lib/postgresql/"), "/")[0])
	return v
}

func postgresCredential() (*syscall.Credential, int, int, error) {
	if os.Geteuid() != 0 {
		return nil, -1, -1, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, -1, -1, errors.New("running as root needs a 'postgres' system user to run the database server")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, uid, gid, nil
}

func chownTree(root string, uid, gid int) error {
	return filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

// Pause stops the server and every process it started (SIGSTOP), as a
// network partition or a frozen host looks to clients: the kernel still
// accepts connections, nothing answers. Postgres backends run in sessions
// of their own, so they are found by parent rather than process group.
func (s *Server) Pause() error { return s.signalTree(syscall.SIGSTOP) }

// Resume continues a paused server.
func (s *Server) Resume() error { return s.signalTree(syscall.SIGCONT) }

func (s *Server) signalTree(sig syscall.Signal) error {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return errors.New("server is not running")
	}
	pid := s.cmd.Process.Pid
	// Stopping, the parent goes first so it starts no child meanwhile;
	// continuing, it goes last.
	if sig == syscall.SIGSTOP {
		if err := syscall.Kill(-pid, sig); err != nil {
			return err
		}
	}
	for _, child := range children(pid) {
		_ = syscall.Kill(child, sig)
	}
	if sig != syscall.SIGSTOP {
		return syscall.Kill(-pid, sig)
	}
	return nil
}

// children lists the processes whose parent is pid (Linux /proc).
func children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after
		// its closing parenthesis.
		rest := string(stat[bytes.LastIndexByte(stat, ')')+1:])
		var state string
		var ppid int
		if _, err := fmt.Sscan(rest, &state, &ppid); err == nil && ppid == pid {
			out = append(out, child)
		}
	}
	return out
}

// StartPostgresReplica makes a streaming replica of the server at
// primaryURL (pg_basebackup, which writes the standby settings) in dir and
// starts it.
func StartPostgresReplica(ctx context.Context, primaryURL, dir string) (*Server, error) {
	bin, err := postgresBinDir()
	if err != nil {
		return nil, err
	}
	cred, uid, gid, err := postgresCredential()
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(primaryURL)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if cred != nil {
		if err := chownTree(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	backup := exec.CommandContext(ctx, filepath.Join(bin, "pg_basebackup"), "-D", filepath.Join(dir, "data"), "-R", "-X", "stream",
		"-h", u.Hostname(), "-p", u.Port(), "-U", "postgres", "--no-sync")
	backup.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := backup.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pg_basebackup: %w: %s", err, out)
	}
	return StartPostgres(ctx, PostgresOptions{Dir: dir})
}
