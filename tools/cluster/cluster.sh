#!/usr/bin/env bash
# A single-node Kubernetes inside one network + mount namespace of its own (nothing on the
# host's network or mounts): cluster.sh up | down | env.
#   up    builds nothing itself: BIN (kube-apiserver, etcd) and NODE_BIN (kubelet, ...) come
#         from `envtest-binaries -cluster`, IMAGES from `make images`.
#   down  stops every process, the namespace goes with its last process; checks nothing is left.
# State lives in $WORK (default .run/cluster); the host reaches the API through
# $WORK/kubeconfig (socat, 127.0.0.1:$API_PORT).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${WORK:-$ROOT/.run/cluster}
API_PORT=${API_PORT:-16443}
NODE_IP=10.87.0.1
POD_CIDR=10.88.0.0/16
SVC_CIDR=10.96.0.0/16
DNS_IP=10.96.0.10
# Paths the kubelet, libcni and containerd 1.6 hard-code: bind-mounted from $WORK inside
# the namespace (created empty on the host when missing, removed again by down).
HARDCODED=(/var/lib/kubelet /var/lib/cni /var/log/containers /var/log/pods)

log() { printf 'cluster: %s\n' "$*" >&2; }
holder() { cat "$WORK/holder.pid" 2>/dev/null || true; }
inns() { nsenter -t "$(holder)" -n -m -- "$@"; }

start() { # name cmd...: run in the namespace, in the background, logs in $WORK/logs
  local name=$1; shift
  nsenter -t "$(holder)" -n -m -- setsid "$@" >"$WORK/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$WORK/pids/$name"
}

wait_for() { # what seconds cmd...
  local what=$1 secs=$2; shift 2
  for ((i = 0; i < secs * 5; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  log "$what not ready after ${secs}s"; return 1
}

pki() {
  local d=$WORK/pki
  mkdir -p "$d"
  cd "$d"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3 -subj /CN=partnerapi-local-ca 2>/dev/null
  cert() { # name subject sans
    openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
    printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\n%s' "${3:+subjectAltName=$3}" >"$1.ext"
    openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$1.crt" -days 3 -extfile "$1.ext" 2>/dev/null
  }
  cert apiserver /CN=kube-apiserver "IP:10.96.0.1,IP:$NODE_IP,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  cert admin "/O=system:masters/CN=admin" ""
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  cd - >/dev/null
}

kubeconfig() { # file server
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: local, cluster: {server: "$2", certificate-authority: $WORK/pki/ca.crt}}]
users: [{name: admin, user: {client-certificate: $WORK/pki/admin.crt, client-key: $WORK/pki/admin.key}}]
contexts: [{name: local, context: {cluster: local, user: admin}}]
current-context: local
EOF
}

up() {
  : "${BIN:?BIN: folder of kube-apiserver and etcd}" "${NODE_BIN:?NODE_BIN: folder of kubelet and the other node components}" "${IMAGES:?IMAGES: folder of the image archives}"
  [[ -z $(holder) ]] || { log "already up ($WORK/holder.pid); run down first"; exit 1; }
  # Absolute: the commands run in the namespace start in /.
  BIN=$(cd "$BIN" && pwd) NODE_BIN=$(cd "$NODE_BIN" && pwd) IMAGES=$(cd "$IMAGES" && pwd)
  rm -rf "$WORK"
  mkdir -p "$WORK"/{logs,pids,etcd,containerd,kubelet,cni/net.d,cni-state,containers,pods,plugins}
  pki
  kubeconfig "$WORK/admin.kubeconfig" "https://127.0.0.1:6443"
  kubeconfig "$WORK/kubeconfig" "https://127.0.0.1:$API_PORT"
  for p in "${HARDCODED[@]}"; do
    [[ -e $p ]] || { mkdir -p "$p"; echo "$p" >>"$WORK/created-mountpoints"; }
  done

  # The namespace: its holder sets up mounts and network, then sleeps until down.
  setsid unshare --net --mount --propagation private --fork -- bash -c "
    set -e
    mount -t tmpfs tmpfs /run
    mount --bind $WORK/kubelet /var/lib/kubelet
    mount --bind $WORK/cni-state /var/lib/cni
    mount --bind $WORK/containers /var/log/containers
    mount --bind $WORK/pods /var/log/pods
    ip link set lo up
    ip link add node0 type veth peer name node1
    ip addr add $NODE_IP/24 dev node0
    ip link set node0 up; ip link set node1 up
    ip route add default dev node0
    sysctl -qw net.ipv4.ip_forward=1
    echo \$\$ > $WORK/holder.pid
    exec sleep infinity
  " >"$WORK/logs/holder.log" 2>&1 &
  wait_for "namespace" 10 test -s "$WORK/holder.pid"
  readlink "/proc/$(holder)/ns/net" >"$WORK/netns"

  cat >"$WORK/containerd.toml" <<EOF
version = 2
root = "$WORK/containerd"
state = "/run/containerd"
[grpc]
  address = "/run/containerd/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "docker.io/partnerapi/pause:dev"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$WORK/cni/net.d"
EOF
  cat >"$WORK/cni/net.d/10-bridge.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "partnerapi", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOF
  start containerd containerd --config "$WORK/containerd.toml"
  wait_for containerd 20 inns ctr -n k8s.io version
  for a in "$IMAGES"/*.tar; do inns ctr -n k8s.io images import "$a" >/dev/null; done

  start etcd "$BIN/etcd" --data-dir "$WORK/etcd" --listen-client-urls http://127.0.0.1:2379 \
    --advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 --unsafe-no-fsync
  start kube-apiserver "$BIN/kube-apiserver" --etcd-servers http://127.0.0.1:2379 \
    --advertise-address "$NODE_IP" --secure-port 6443 \
    --tls-cert-file "$WORK/pki/apiserver.crt" --tls-private-key-file "$WORK/pki/apiserver.key" \
    --client-ca-file "$WORK/pki/ca.crt" --service-cluster-ip-range "$SVC_CIDR" \
    --service-account-key-file "$WORK/pki/sa.pub" --service-account-signing-key-file "$WORK/pki/sa.key" \
    --service-account-issuer https://kubernetes.default.svc --authorization-mode Node,RBAC \
    --kubelet-client-certificate "$WORK/pki/admin.crt" --kubelet-client-key "$WORK/pki/admin.key" \
    --kubelet-preferred-address-types InternalIP --allow-privileged=true
  wait_for kube-apiserver 60 inns "$NODE_BIN/kubectl" --kubeconfig "$WORK/admin.kubeconfig" get --raw /readyz
  start kube-controller-manager "$NODE_BIN/kube-controller-manager" --kubeconfig "$WORK/admin.kubeconfig" \
    --service-account-private-key-file "$WORK/pki/sa.key" --root-ca-file "$WORK/pki/ca.crt" \
    --cluster-signing-cert-file "$WORK/pki/ca.crt" --cluster-signing-key-file "$WORK/pki/ca.key" \
    --use-service-account-credentials --leader-elect=false --flex-volume-plugin-dir "$WORK/plugins" \
    --bind-address 127.0.0.1
  start kube-scheduler "$NODE_BIN/kube-scheduler" --kubeconfig "$WORK/admin.kubeconfig" --leader-elect=false --bind-address 127.0.0.1

  cat >"$WORK/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
volumePluginDir: $WORK/plugins
authentication: {anonymous: {enabled: false}, webhook: {enabled: false}, x509: {clientCAFile: $WORK/pki/ca.crt}}
authorization: {mode: AlwaysAllow}
clusterDomain: cluster.local
clusterDNS: [$DNS_IP]
resolvConf: ""
failSwapOn: false
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
address: $NODE_IP
healthzBindAddress: 127.0.0.1
EOF
  start kubelet "$NODE_BIN/kubelet" --config "$WORK/kubelet.yaml" --kubeconfig "$WORK/admin.kubeconfig" \
    --hostname-override node --node-ip "$NODE_IP"
  start kube-proxy "$NODE_BIN/kube-proxy" --kubeconfig "$WORK/admin.kubeconfig" --hostname-override node \
    --cluster-cidr "$POD_CIDR" --proxy-mode iptables --conntrack-max-per-core 0 --bind-address 127.0.0.1
  start api-bridge socat "UNIX-LISTEN:$WORK/api.sock,fork" TCP:127.0.0.1:6443
  setsid socat "TCP-LISTEN:$API_PORT,bind=127.0.0.1,fork,reuseaddr" "UNIX-CONNECT:$WORK/api.sock" >"$WORK/logs/host-bridge.log" 2>&1 </dev/null &
  echo $! >"$WORK/pids/host-bridge"
  wait_for "node" 90 kctl wait --for condition=Ready node/node --timeout 1s
  # NetworkPolicy enforcement (the bridge CNI enforces none): kube-router's firewall alone,
  # iptables + ipset in the namespace. Its version has reported security flaws and is the
  # newest the module proxy serves; it runs only in this throwaway test node, never ships.
  start kube-router "$NODE_BIN/kube-router" --kubeconfig "$WORK/admin.kubeconfig" --hostname-override node \
    --run-firewall=true --run-router=false --run-service-proxy=false --enable-cni=false \
    --service-cluster-ip-range "$SVC_CIDR" --metrics-port 0
  wait_for "kube-router's firewall" 60 inns iptables -S KUBE-ROUTER-FORWARD
  kctl apply -f "$ROOT/tools/cluster/coredns.yaml" >/dev/null
  wait_for "CoreDNS" 90 kctl -n kube-system wait --for condition=Available deployment/coredns --timeout 1s
  log "up: KUBECONFIG=$WORK/kubeconfig"
}

kctl() { "$NODE_BIN/kubectl" --kubeconfig "$WORK/kubeconfig" "$@"; }

down() {
  local ns
  ns=$(cat "$WORK/netns" 2>/dev/null || true)
  [[ -f $WORK/pids/host-bridge ]] && kill "$(cat "$WORK/pids/host-bridge")" 2>/dev/null || true
  # Every process of the namespace (the node's components, containerd's shims, the
  # holder): the namespace and its mounts, iptables rules and links go with the last one.
  # Containers run in pod namespaces of their own: find them by their cgroup. In rounds
  # until none is left: containerd can start a shim while a round runs, and a new process
  # may take a PID below those already listed.
  local round p found
  for round in 1 2 3 4 5 6 7 8 9 10; do
    found=""
    if [[ -n $ns ]]; then
      for p in $(ls /proc | grep -E '^[0-9]+$'); do
        if [[ $(readlink "/proc/$p/ns/net" 2>/dev/null) == "$ns" ]]; then kill -9 "$p" 2>/dev/null || true; found=1; fi
      done
    fi
    for p in $(grep -l kubepods /proc/[0-9]*/cgroup 2>/dev/null | cut -d/ -f3); do kill -9 "$p" 2>/dev/null || true; found=1; done
    [[ -n $found ]] || break
    sleep 1
  done
  # Pod cgroups live in the host's cgroup tree.
  for c in /sys/fs/cgroup/*/kubepods*; do
    [[ -d $c ]] && find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done
  if [[ -f $WORK/created-mountpoints ]]; then
    while read -r p; do rmdir "$p" 2>/dev/null || true; done <"$WORK/created-mountpoints"
  fi
  rm -f "$WORK/holder.pid" "$WORK/netns"
  local left
  left=$(find /sys/fs/cgroup -type d -name 'kubepods*' 2>/dev/null | head -3)
  [[ -z $ns ]] || for p in $(ls /proc | grep -E '^[0-9]+$'); do
    if [[ $(readlink "/proc/$p/ns/net" 2>/dev/null) == "$ns" ]]; then left+=" process $p"; fi
  done
  [[ -z $left ]] || { log "left behind: $left"; exit 1; }
  log "down"
}

case ${1:-} in
up) up ;;
down) down ;;
*) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
