#!/usr/bin/env bash
# The custom build of skaffold.yaml's local profile, run by skaffold for one process ($1)
# with IMAGE set to the name it wants: the process's image written without a container
# engine (tools/cmd/images, the Dockerfile's build) and imported into the local cluster's
# containerd, where the kubelet finds it (no registry, push: false).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${CLUSTER_WORK:-$ROOT/.run/cluster}
: "${IMAGE:?IMAGE: the image name skaffold builds (run through tools/cluster/skaffold.sh)}"
holder=$(cat "$WORK/holder.pid" 2>/dev/null) || { echo "skaffold-build: no local cluster in $WORK (make cluster-up)" >&2; exit 1; }
out=$ROOT/.cache/skaffold/$1
(cd "$ROOT/tools" && GOWORK=off go run ./cmd/images -out "$out" -only "$1" -image "$IMAGE")
ctr --address "/proc/$holder/root/run/containerd/containerd.sock" -n k8s.io images import "$out/$1.tar" >/dev/null
