#!/usr/bin/env bash
# make test-skaffold: the dev loop of docs/develop.md on a real node, then down (also on failure).
#   1. cluster.sh up (make cluster-up);
#   2. a clean clone of this repository's HEAD (the checkout is never edited), chart deps;
#   3. `skaffold run -p local` from the clone (tools/cluster/skaffold.sh): every image built
#      without Docker and imported, the umbrella chart installed with the dev values; the
#      identity sign-in page answers through the gateway Service (first-run time);
#   4. `skaffold dev -p local` from the clone; once it watches, the sign-in page's heading is
#      changed in the clone's identity module; the time from that save until the gateway
#      Service serves the new heading is the save-to-serving time; identity's pod is the
#      only pod replaced;
#   5. cluster.sh down, which fails when anything is left.
# Root needed, as for cluster-up; curl runs in the node's network namespace (nsenter -n).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
WORK=$ROOT/.run/cluster
T=$ROOT/.run/skaffold-test
NS=partner-api
START=$(date +%s)

log() { printf 'test-skaffold [%3ds]: %s\n' $(($(date +%s) - START)) "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

cleanup() {
  local rc=$?
  # skaffold dev, its nodeimages and skaffold.sh: one process group of their own.
  [[ -f $T/dev.pid ]] && kill -INT -- "-$(cat "$T/dev.pid")" 2>/dev/null && wait "$(cat "$T/dev.pid")" 2>/dev/null || true
  if ((rc != 0)) && [[ -n ${KUBECONFIG:-} ]]; then
    log "state at the failure (skaffold's output in $T/*.log):"
    kubectl get pods -A -o wide >&2 || true
    tail -30 "$T/dev.log" >&2 2>/dev/null || true
  fi
  tools/cluster/cluster.sh down || rc=1
  log "done in $(($(date +%s) - START)) s, exit $rc"
  exit $rc
}

rm -rf "$T" && mkdir -p "$T" .cache
bins=$(cd tools && GOWORK=off go run ./envtest/cmd/envtest-binaries -cluster 2>>"$ROOT/.cache/envtest-binaries.log")
export PATH=$(echo "$bins" | sed -n 2p):$PATH KUBECONFIG=$WORK/kubeconfig CLUSTER_WORK=$WORK
(cd tools && GOWORK=off go run ./skaffold/cmd/skaffold-binary 2>>"$ROOT/.cache/skaffold-binary.log" >/dev/null) ||
  fail "building skaffold (.cache/skaffold-binary.log)"

trap cleanup EXIT
make --no-print-directory cluster-up
log "cluster up"
git clone -q --no-checkout "$ROOT" "$T/tree"
git -C "$T/tree" checkout -q "$(git rev-parse HEAD)"
make --no-print-directory -C "$T/tree" chart-deps >/dev/null
log "clean clone of $(git rev-parse --short HEAD) in $T/tree"

innet() { nsenter -t "$(cat "$WORK/holder.pid")" -n -- "$@"; }
page() { # the sign-in page through the gateway Service
  innet curl -sS -m 5 "http://$(kubectl -n $NS get svc rpa-gateway -o jsonpath='{.spec.clusterIP}'):8080/account"
}
pods() { # name and UID of every pod of the release that is not terminating, one per line
  kubectl -n $NS get pods -o json | jq -r '.items[] | select(.metadata.deletionTimestamp | not) | "\(.metadata.name) \(.metadata.uid)"' | sort
}
settled() { # no pod of the release is terminating and every other one is Ready
  kubectl -n $NS get pods -o json | jq -e '.items | all(.metadata.deletionTimestamp == null and
    any(.status.conditions[]?; .type == "Ready" and .status == "True"))' >/dev/null
}
HEADING="Sign in to see your connected apps"

t0=$(date +%s)
"$T/tree/tools/cluster/skaffold.sh" run --port-forward=off >"$T/run.log" 2>&1 || { tail -40 "$T/run.log" >&2; fail "skaffold run"; }
page | grep -q "<h1>$HEADING</h1>" || fail "the sign-in page through the gateway lacks \"$HEADING\""
log "skaffold run (8 images built and imported, release installed and Ready): $(($(date +%s) - t0)) s; the gateway serves the sign-in page"

setsid "$T/tree/tools/cluster/skaffold.sh" dev --port-forward=off --cleanup=false >"$T/dev.log" 2>&1 &
echo $! >"$T/dev.pid"
t0=$(date +%s)
until grep -q "Watching for changes" "$T/dev.log"; do
  kill -0 "$(cat "$T/dev.pid")" 2>/dev/null || { tail -40 "$T/dev.log" >&2; fail "skaffold dev ended"; }
  (($(date +%s) - t0 < 300)) || fail "skaffold dev did not start watching within 300 s"
  sleep 0.5
done
log "skaffold dev watching after $(($(date +%s) - t0)) s"
# skaffold dev's first deploy labels the pods with its own run id, so every Deployment rolls
# once; the pods to compare with are those left when that has finished.
until settled; do
  (($(date +%s) - t0 < 300)) || fail "the release did not settle after skaffold dev's first deploy"
  sleep 1
done
pods >"$T/pods.before"

NEW="$HEADING (build $(date +%s%N | tail -c 7))"
sed -i "s|<h1>$HEADING</h1>|<h1>$NEW</h1>|" "$T/tree/services/identity/internal/web/templates/signin.html"
saved=$(date +%s.%N)
mark=$(wc -l <"$T/dev.log")
grep -q "$NEW" "$T/tree/services/identity/internal/web/templates/signin.html" || fail "the heading was not changed"
until page 2>/dev/null | grep -q "<h1>$NEW</h1>"; do
  kill -0 "$(cat "$T/dev.pid")" 2>/dev/null || { tail -40 "$T/dev.log" >&2; fail "skaffold dev ended"; }
  (($(date +%s) - ${saved%.*} < 300)) || fail "the new heading was not served within 300 s"
  sleep 0.2
done
took=$(echo "$(date +%s.%N) - $saved" | bc)
log "save to serving through the gateway: $(printf '%.1f' "$took") s"
pods >"$T/pods.after"

# Only identity's pod is new; every other pod of the release is the same pod.
gone=$(comm -23 "$T/pods.before" "$T/pods.after" | cut -d' ' -f1)
came=$(comm -13 "$T/pods.before" "$T/pods.after" | cut -d' ' -f1)
[[ -n $came ]] || fail "no pod was replaced"
for p in $gone $came; do
  [[ $p == rpa-identity-* ]] || fail "pod $p was replaced too (before: $(tr '\n' ' ' <"$T/pods.before"); after: $(tr '\n' ' ' <"$T/pods.after"))"
done
tail -n +$((mark + 1)) "$T/dev.log" >"$T/dev-change.log"
grep -q "Build \[partnerapi/identity\] succeeded" "$T/dev-change.log" || fail "skaffold dev did not rebuild identity"
others=$(grep -oE 'Build \[partnerapi/[a-z]+\] succeeded' "$T/dev-change.log" | { grep -v identity || true; } | sort -u | tr '\n' ' ')
[[ -z $others ]] || fail "skaffold dev rebuilt other images: $others"
log "replaced: $(echo $gone) -> $(echo $came); every other pod kept"
log "PASS"
