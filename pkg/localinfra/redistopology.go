package localinfra

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// RedisTopology is a set of redis-server processes that clients reach
// through one URL: a Redis Cluster or a Sentinel-managed primary.
type RedisTopology struct {
	// URL names the topology in the form go-redis parses: a Cluster's seed
	// nodes as redis://host:port?addr=host:port&addr=…, a Sentinel set as
	// redis://sentinel?master_name=…&addr=sentinel&addr=….
	URL string
	// Nodes are the data nodes; in a Cluster the first Masters are its
	// masters at the start, in a Sentinel set the first is the primary.
	Nodes []*Server
	// Sentinels are the sentinel processes (a Sentinel set only).
	Sentinels []*Server
	ports     []int
}

// Stop stops every process of the topology.
func (t *RedisTopology) Stop() {
	for _, s := range append(append([]*Server{}, t.Sentinels...), t.Nodes...) {
		_ = s.Stop()
	}
}

// Addr is node i's address.
func (t *RedisTopology) Addr(i int) string { return "127.0.0.1:" + strconv.Itoa(t.ports[i]) }

// cli runs redis-cli with args and returns its output.
func cli(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "redis-cli", args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("redis-cli %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// StartRedisCluster starts a Redis Cluster of masters masters, each with one
// replica, in dir (cluster mode of Debian's redis-server, created with
// redis-cli --cluster create), and waits until every node reports the
// cluster ok. A failed master's replica takes over after nodeTimeout.
func StartRedisCluster(ctx context.Context, dir string, masters int, nodeTimeout time.Duration) (*RedisTopology, error) {
	if _, err := exec.LookPath("redis-cli"); err != nil {
		return nil, errors.New("redis-cli is not installed (Debian package redis-tools)")
	}
	t := &RedisTopology{}
	for i := range masters * 2 {
		port, err := FreePort()
		if err != nil {
			t.Stop()
			return nil, err
		}
		s, err := StartRedis(ctx, RedisOptions{Dir: filepath.Join(dir, strconv.Itoa(port)), Port: port, Args: []string{
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.Itoa(int(nodeTimeout / time.Millisecond)),
			// A replica with any replication lag may take over: the nodes of
			// a test cluster are never partitioned, only killed.
			"--cluster-replica-validity-factor", "0", "--repl-diskless-sync-delay", "0"}})
		if err != nil {
			t.Stop()
			return nil, fmt.Errorf("cluster node %d: %w", i, err)
		}
		t.Nodes, t.ports = append(t.Nodes, s), append(t.ports, port)
	}
	args := []string{"--cluster", "create"}
	for i := range t.Nodes {
		args = append(args, t.Addr(i))
	}
	// redis-cli makes the first masters of the list the masters.
	if _, err := cli(ctx, append(args, "--cluster-replicas", "1", "--cluster-yes")...); err != nil {
		t.Stop()
		return nil, err
	}
	if err := t.WaitClusterOK(ctx, 30*time.Second); err != nil {
		t.Stop()
		return nil, err
	}
	if err := t.waitReplicasInSync(ctx, 30*time.Second); err != nil {
		t.Stop()
		return nil, err
	}
	q := url.Values{}
	for i := 1; i < len(t.Nodes); i++ {
		q.Add("addr", t.Addr(i))
	}
	t.URL = "redis://" + t.Addr(0) + "?" + q.Encode()
	return t, nil
}

// WaitClusterOK waits until every live node says cluster_state:ok.
func (t *RedisTopology) WaitClusterOK(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		ok := true
		for i, s := range t.Nodes {
			select {
			case <-s.Exited():
				continue
			default:
			}
			out, err := cli(ctx, "-p", strconv.Itoa(t.ports[i]), "cluster", "info")
			if err != nil || !strings.Contains(out, "cluster_state:ok") {
				ok = false
				break
			}
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("the redis cluster did not become ok")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// MasterHolding returns the index of the live master that holds a key
// matching pattern (a SCAN pattern).
func (t *RedisTopology) MasterHolding(ctx context.Context, pattern string) (int, error) {
	for i, s := range t.Nodes {
		select {
		case <-s.Exited():
			continue
		default:
		}
		port := strconv.Itoa(t.ports[i])
		role, err := cli(ctx, "-p", port, "role")
		if err != nil || !strings.HasPrefix(role, "master") {
			continue
		}
		keys, err := cli(ctx, "-p", port, "--scan", "--pattern", pattern)
		if err != nil {
			return 0, err
		}
		if strings.TrimSpace(keys) != "" {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no live master holds a key matching %q", pattern)
}

// WaitNewPrimary waits until the sentinels name a primary other than node
// old.
func (t *RedisTopology) WaitNewPrimary(ctx context.Context, masterName string, old int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		for _, s := range t.Sentinels {
			port := strings.TrimPrefix(s.URL, "redis://127.0.0.1:")
			out, err := cli(ctx, "-p", port, "sentinel", "get-master-addr-by-name", masterName)
			if f := strings.Fields(out); err == nil && len(f) == 2 && f[1] != strconv.Itoa(t.ports[old]) {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("the sentinels named no new primary")
}

// StartRedisSentinel starts a primary with one replica and three sentinels
// watching it under masterName, in dir; a failed primary is replaced after
// downAfter.
func StartRedisSentinel(ctx context.Context, dir, masterName string, downAfter time.Duration) (*RedisTopology, error) {
	t := &RedisTopology{}
	for i := range 2 {
		port, err := FreePort()
		if err != nil {
			t.Stop()
			return nil, err
		}
		var args []string
		if i > 0 {
			args = []string{"--replicaof", "127.0.0.1", strconv.Itoa(t.ports[0])}
		}
		args = append(args, "--repl-diskless-sync-delay", "0")
		s, err := StartRedis(ctx, RedisOptions{Dir: filepath.Join(dir, strconv.Itoa(port)), Port: port, Args: args})
		if err != nil {
			t.Stop()
			return nil, err
		}
		t.Nodes, t.ports = append(t.Nodes, s), append(t.ports, port)
	}
	q := url.Values{"master_name": {masterName}}
	var first string
	for range 3 {
		port, err := FreePort()
		if err != nil {
			t.Stop()
			return nil, err
		}
		sdir := filepath.Join(dir, "sentinel-"+strconv.Itoa(port))
		if err := os.MkdirAll(sdir, 0o755); err != nil {
			t.Stop()
			return nil, err
		}
		conf := filepath.Join(sdir, "sentinel.conf")
		ms := strconv.Itoa(int(downAfter / time.Millisecond))
		body := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nlogfile %s\n"+
			"sentinel monitor %s 127.0.0.1 %d 2\nsentinel down-after-milliseconds %s %s\nsentinel failover-timeout %s 2000\n",
			port, sdir, filepath.Join(sdir, "sentinel.log"), masterName, t.ports[0], masterName, ms, masterName)
		if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
			t.Stop()
			return nil, err
		}
		cmd := exec.Command("redis-server", conf, "--sentinel")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
		s, err := start(cmd, syscall.SIGTERM, nil)
		if err != nil {
			t.Stop()
			return nil, err
		}
		s.URL = "redis://127.0.0.1:" + strconv.Itoa(port)
		t.Sentinels = append(t.Sentinels, s)
		if err := waitRedis(ctx, s, port, 15*time.Second); err != nil {
			t.Stop()
			return nil, fmt.Errorf("sentinel did not start: %w", err)
		}
		if first == "" {
			first = "127.0.0.1:" + strconv.Itoa(port)
		} else {
			q.Add("addr", "127.0.0.1:"+strconv.Itoa(port))
		}
	}
	t.URL = "redis://" + first + "?" + q.Encode()
	if err := t.waitReplicasInSync(ctx, 30*time.Second); err != nil {
		t.Stop()
		return nil, err
	}
	return t, nil
}

// waitReplicasInSync waits until every replica has its master's data and
// follows it (master_link_status:up), so a failover keeps what was written.
func (t *RedisTopology) waitReplicasInSync(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for i := range t.Nodes {
		for {
			out, err := cli(ctx, "-p", strconv.Itoa(t.ports[i]), "info", "replication")
			if err == nil && (strings.Contains(out, "role:master") || strings.Contains(out, "master_link_status:up")) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("replica %s did not catch up with its master", t.Addr(i))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// WaitClusterFailover waits until the cluster has marked node victim failed
// and is ok again: its replica serves its slots.
func (t *RedisTopology) WaitClusterFailover(ctx context.Context, victim int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		failed := false
		for i, s := range t.Nodes {
			select {
			case <-s.Exited():
				continue
			default:
			}
			out, err := cli(ctx, "-p", strconv.Itoa(t.ports[i]), "cluster", "nodes")
			if err != nil {
				break
			}
			for _, line := range strings.Split(out, "\n") {
				f := strings.Fields(line)
				if len(f) > 2 && strings.HasPrefix(f[1], t.Addr(victim)+"@") && strings.Contains(f[2], "fail") && !strings.Contains(f[2], "fail?") {
					failed = true
				}
			}
			break
		}
		if failed {
			return t.WaitClusterOK(ctx, time.Until(deadline))
		}
		if time.Now().After(deadline) {
			return errors.New("the cluster did not mark the killed master failed")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
