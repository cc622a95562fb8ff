package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"partnerapi.dev/pkg/localinfra"
)

// NginxBinary finds nginx (/usr/sbin/nginx or on PATH). When it is missing
// and install is true, it runs apt-get install -y nginx (as root, Debian);
// otherwise it fails saying how to install it.
func NginxBinary(ctx context.Context, install bool) (string, error) {
	find := func() string {
		if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
			return "/usr/sbin/nginx"
		}
		if p, err := exec.LookPath("nginx"); err == nil {
			return p
		}
		return ""
	}
	if p := find(); p != "" {
		return p, nil
	}
	const how = "nginx is not installed: run apt-get install -y nginx (Debian), or loadgen gateway --install-nginx as root"
	if _, err := exec.LookPath("apt-get"); !install || err != nil || os.Geteuid() != 0 {
		return "", errors.New(how)
	}
	fmt.Fprintln(os.Stderr, "loadgen: nginx is missing; running apt-get install -y nginx")
	cmd := exec.CommandContext(ctx, "apt-get", "install", "-y", "--no-install-recommends", "nginx")
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("apt-get install -y nginx: %w (%s)", err, how)
	}
	if p := find(); p != "" {
		return p, nil
	}
	return "", errors.New(how)
}

// Nginx is a foreground nginx proxying to one upstream.
type Nginx struct {
	URL      string
	cmd      *exec.Cmd
	done     chan struct{}
	dir      string
	upstream string
	port     int
}

// StartNginx writes a configuration into dir (pid, logs and temp files stay
// there) that proxies every request to upstream ("127.0.0.1:8081") over
// pooled keep-alive connections, setting the given request headers, and starts
// nginx in the foreground on a free loopback port.
func StartNginx(ctx context.Context, bin, dir, upstream string, headers map[string]string) (*Nginx, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := localinfra.FreePort()
	if err != nil {
		return nil, err
	}
	n := &Nginx{dir: dir, upstream: upstream, port: port, URL: fmt.Sprintf("http://127.0.0.1:%d", port)}
	path, err := n.writeConfig(headers)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-p", dir, "-c", path, "-e", filepath.Join(dir, "error.log"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	out, _ := os.Create(filepath.Join(dir, "nginx.out"))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start nginx: %w", err)
	}
	done := make(chan struct{})
	n.cmd, n.done = cmd, done
	go func() { _ = cmd.Wait(); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			o, _ := os.ReadFile(filepath.Join(dir, "nginx.out"))
			return nil, fmt.Errorf("nginx exited at start:\n%s%s", o, log)
		case <-ctx.Done():
			n.Stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return n, nil
		}
	}
	n.Stop()
	return nil, errors.New("nginx did not listen within 10s")
}

// Stop shuts nginx down (SIGQUIT: graceful) and waits up to 10 s.
func (n *Nginx) Stop() {
	if n == nil || n.cmd.Process == nil {
		return
	}
	_ = n.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-n.done:
	case <-time.After(10 * time.Second):
		_ = n.cmd.Process.Kill()
		<-n.done
	}
}

// SetHeaders rewrites the configuration with new header values and reloads
// nginx (SIGHUP: new workers take the new configuration, old ones finish
// their requests).
func (n *Nginx) SetHeaders(headers map[string]string) error {
	if _, err := n.writeConfig(headers); err != nil {
		return err
	}
	if err := n.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		return err
	}
	time.Sleep(300 * time.Millisecond)
	return nil
}

func (n *Nginx) writeConfig(headers map[string]string) (string, error) {
	var set strings.Builder
	for k, v := range headers {
		fmt.Fprintf(&set, "      proxy_set_header %s \"%s\";\n", k, strings.ReplaceAll(v, `"`, `\"`))
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;\n" // workers keep root's access to the temp dir
	}
	conf := fmt.Sprintf(`# written by loadgen: nginx proxying the same upstream with no auth
%[5]sdaemon off;
master_process on;
worker_processes auto;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path %[1]s/client_body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  keepalive_requests 1000000;
  upstream backend {
    server %[2]s;
    keepalive 128;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:%[3]d;
    location / {
      proxy_pass http://backend;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
%[4]s    }
  }
}
`, n.dir, n.upstream, n.port, set.String(), user)
	path := filepath.Join(n.dir, "nginx.conf")
	return path, os.WriteFile(path, []byte(conf), 0o600)
}
