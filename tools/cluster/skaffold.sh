#!/usr/bin/env bash
# skaffold on the local cluster (make cluster-up), no Docker engine, no registry:
#   tools/cluster/skaffold.sh dev|run|build [skaffold flags]   (make dev runs `dev`)
# runs the pinned skaffold (tools/skaffold, built once and cached) with the local profile,
# the node's kubeconfig, helm and kubectl, and tools/cmd/nodeimages answering skaffold's
# Docker API calls from the node's containerd. CLUSTER_WORK is the cluster's state folder
# (default .run/cluster of this tree). Root, like the cluster.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export CLUSTER_WORK=${CLUSTER_WORK:-$ROOT/.run/cluster}
holder=$(cat "$CLUSTER_WORK/holder.pid" 2>/dev/null) || { echo "skaffold.sh: no local cluster in $CLUSTER_WORK (make cluster-up)" >&2; exit 1; }
mkdir -p "$ROOT/.cache/bin"
bins=$(cd "$ROOT/tools" && GOWORK=off go run ./envtest/cmd/envtest-binaries -cluster 2>>"$ROOT/.cache/envtest-binaries.log")
skaffold=$(cd "$ROOT/tools" && GOWORK=off go run ./skaffold/cmd/skaffold-binary 2>>"$ROOT/.cache/skaffold-binary.log")
(cd "$ROOT/tools" && GOWORK=off go build -o "$ROOT/.cache/bin/nodeimages" ./cmd/nodeimages)

sock=$(mktemp -u "$CLUSTER_WORK/docker-XXXXXX.sock")
"$ROOT/.cache/bin/nodeimages" -listen "$sock" -containerd "/proc/$holder/root/run/containerd/containerd.sock" &
api=$!
trap 'kill $api 2>/dev/null || true; rm -f "$sock"' EXIT
for _ in {1..50}; do [[ -S $sock ]] && break; sleep 0.1; done
# No update check, survey or usage metrics: skaffold's global config of this tree only.
cat >"$CLUSTER_WORK/skaffold-config.yaml" <<CFG
global:
  update-check: false
  collect-metrics: false
  survey: {disable-prompt: true}
CFG

export PATH=$(sed -n 2p <<<"$bins"):$PATH KUBECONFIG=$CLUSTER_WORK/kubeconfig DOCKER_HOST=unix://$sock
cmd=${1:?usage: skaffold.sh dev|run|build [flags]}
shift
cd "$ROOT"
# Only the local profile (dev's activation by `skaffold dev` would take its values file);
# images stay in the node until cluster-down (removing them is not served).
"$skaffold" "$cmd" --config "$CLUSTER_WORK/skaffold-config.yaml" -p local --profile-auto-activation=false \
  --no-prune --no-prune-children "$@"
