#!/usr/bin/env bash
# make test-cluster: the release on a real node, end to end, then down (also on failure).
#   1. cluster.sh up (make cluster-up: cached binaries and images);
#   2. helm install --wait of the umbrella chart, deploy/dev values + local-images.yaml;
#   3. the demo data (seed) and a partner token from the real OAuth flow (partnerctl token),
#      then one call per area through the gateway Service, each answering 2xx;
#   4. NetworkPolicy enforced (kube-router): a pod outside the release reaches the gateway,
#      not identity, a service, Postgres or Redis;
#   5. under a loop of partner reads through the gateway Service: a rolling restart of
#      orders, helm upgrade --wait to a new image tag, helm rollback --wait to the first
#      revision; no 5xx, no request unanswered;
#   6. tools/e2e through the gateway Service (E2E_TARGET), every area, real OAuth tokens;
#   7. the partner operator turned on by its chart: a PartnerClient applied with kubectl,
#      then the OAuth flow with its client; the PartnerClient deleted, then its token refused;
#   8. staging and prod values (images and secrets overlaid) installed and Ready;
#   9. cluster.sh down, which fails when anything is left.
# The seed, partnerctl and the load run in the node's network namespace (nsenter -n) and
# reach the Services at their ClusterIPs, as a pod would. Root needed, as for cluster-up.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
WORK=$ROOT/.run/cluster
T=$ROOT/.run/cluster-test
REL=rpa
START=$(date +%s)

log() { printf 'test-cluster [%3ds]: %s\n' $(($(date +%s) - START)) "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

cleanup() {
  local rc=$?
  [[ -f $T/load.pid ]] && kill "$(cat "$T/load.pid")" 2>/dev/null || true
  if ((rc != 0)) && [[ -n ${KUBECONFIG:-} ]]; then
    log "state at the failure:"
    kubectl get pods -A -o wide >&2 || true
  fi
  tools/cluster/cluster.sh down || rc=1
  log "done in $(($(date +%s) - START)) s, exit $rc"
  exit $rc
}

rm -rf "$T" && mkdir -p "$T/bin" .cache
bins=$(cd tools && GOWORK=off go run ./envtest/cmd/envtest-binaries -cluster 2>>"$ROOT/.cache/envtest-binaries.log")
NODE_BIN=$(echo "$bins" | sed -n 2p)
export PATH=$NODE_BIN:$PATH KUBECONFIG=$WORK/kubeconfig
# The seed, partnerctl and the e2e test, built while the node starts.
(cd tools && GOWORK=off go build -o "$T/bin" ./cmd/seed) &
build_seed=$!
(cd services/identity && GOWORK=off go build -o "$T/bin" ./cmd/partnerctl) &
build_ctl=$!
(cd tools && GOWORK=off go test -c -o "$T/bin/e2e.test" ./e2e) &
build_e2e=$!

trap cleanup EXIT
make --no-print-directory cluster-up
log "cluster up"
make --no-print-directory chart-deps >/dev/null
wait $build_seed && wait $build_ctl && wait $build_e2e || fail "building seed, partnerctl and the e2e test"

innet() { nsenter -t "$(cat "$WORK/holder.pid")" -n -- "$@"; }
svc() { # namespace name port: the Service's ClusterIP URL
  echo "http://$(kubectl -n "$1" get svc "$REL-$2" -o jsonpath='{.spec.clusterIP}'):$3"
}
install() { # namespace values... : helm install --wait, then every pod Ready
  local ns=$1; shift
  local t0=$(date +%s)
  helm install "$REL" charts/restaurant-partner-api -n "$ns" --create-namespace --wait --timeout 5m "$@" >/dev/null ||
    fail "helm install in $ns"
  kubectl -n "$ns" wait --for condition=Ready pod --all --timeout 60s >/dev/null || fail "pods of $ns not Ready"
  log "$ns installed and Ready in $(($(date +%s) - t0)) s ($(kubectl -n "$ns" get pods --no-headers | wc -l) pods)"
}

# --- dev: install, seed, token, one call per area ---------------------------------------
install dev -f deploy/dev/values.yaml -f tools/cluster/local-images.yaml
val() { # process key: a secret value of the dev values
  helm -n dev get values "$REL" -a -o json | jq -r --arg p "$1" --arg k "$2" '.[$p].secret.values[$k]'
}
GW=$(svc dev gateway 8080)
innet env ADMIN_TOKEN="$(val identity ADMIN_TOKEN)" INGEST_TOKEN="$(val orders INGEST_TOKEN)" "$T/bin/seed" \
  --identity-url "$(svc dev identity-internal 9090)" --orders-url "$(svc dev orders 8080)" \
  --accounting-url "$(svc dev accounting 8080)" --menus-url "$(svc dev menus 8080)" >"$T/seed.log" 2>&1 ||
  { cat "$T/seed.log" >&2; fail "seed"; }
log "demo data loaded through the Services"
SCOPES="svc.restaurant.read svc.orders.read svc.accounting.read svc.analytics.read svc.menu.read svc.catalog.import.write svc.webhooks.manage"
TOKEN=$(innet "$T/bin/partnerctl" token --base-url "$GW" --email owner@demo.example --password demo-password \
  --client-id demo-partner --redirect-uri http://127.0.0.1:8976/callback --scope "$SCOPES" --json | jq -r .access_token) ||
  fail "partnerctl token"
[[ $TOKEN == ey* ]] || fail "no access token"
call() { # path: GET through the gateway Service with the partner token; prints the body
  innet curl -sS -m 20 -w '\n%{http_code}' -H "Authorization: Bearer $TOKEN" "$GW$1"
}
RID=$(call /v1/restaurants | head -1 | jq -r '.data[0].restaurantId')
[[ $RID =~ ^[0-9a-f-]{36}$ ]] || fail "GET /v1/restaurants gave no restaurant"
for p in /v1/restaurants "/v1/restaurants/$RID/orders?limit=3" "/v1/restaurants/$RID/accounting-summary?start_date=2026-01-01&end_date=2026-01-31&scope=month" \
  "/v1/restaurants/$RID/menus" "/v1/restaurants/$RID/catalog-import/capabilities" \
  "/v1/restaurants/$RID/events?after=0" "/v1/restaurants/$RID/webhook-endpoints"; do
  out=$(call "$p")
  code=$(tail -1 <<<"$out")
  [[ $code == 2* ]] || fail "GET $p: $out"
  log "GET $p: $code"
done

# --- NetworkPolicy: a pod outside the release reaches the gateway and nothing else --------
# The partner calls above crossed the allowed paths (gateway to every service, services to
# Postgres) under kube-router's enforcement. Now a pod of the default namespace (the pause
# image: it only holds its network namespace) tries the others; each probe runs in that
# pod's network namespace, so it leaves from the pod's address as the pod's own would.
kubectl -n default run outsider --image docker.io/partnerapi/pause:dev --image-pull-policy Never \
  --restart Never >/dev/null
kubectl -n default wait --for condition=Ready pod/outsider --timeout 60s >/dev/null || fail "the outsider pod is not Ready"
cid=$(kubectl -n default get pod outsider -o jsonpath='{.status.containerStatuses[0].containerID}')
pid=$(nsenter -t "$(cat "$WORK/holder.pid")" -n -m -- ctr -n k8s.io task ls | awk -v id="${cid#containerd://}" '$1 == id {print $2}')
[[ $pid =~ ^[0-9]+$ ]] || fail "no process of the outsider pod ($cid)"
reach() { # service port: a TCP connection from the outsider pod to the dev Service opens within 3 s
  local ip
  ip=$(kubectl -n dev get svc "$REL-$1" -o jsonpath='{.spec.clusterIP}')
  nsenter -t "$pid" -n -- timeout 3 bash -c "exec 3<>/dev/tcp/$ip/$2" 2>/dev/null
}
# The gateway admits everyone: once the outsider reaches it, the policy agent knows the pod
# (a pod's first connections may be refused until it does).
for ((i = 0; i < 30; i++)); do reach gateway 8080 && break; sleep 1; done
reach gateway 8080 || fail "the outsider pod cannot reach the gateway, which admits everyone"
for target in "identity 8080" "identity-internal 9090" "orders 8080" "events 8080" "postgresql 5432" "redis 6379"; do
  # shellcheck disable=SC2086
  ! reach $target || fail "a pod outside the release reached ${target/ /:}"
done
kubectl -n default delete pod outsider --wait=false >/dev/null
log "NetworkPolicy: the outsider reached the gateway; identity, its internal port, orders, events, Postgres and Redis refused it"

# --- rolling restart and upgrade under load ---------------------------------------------
# A loop of partner reads through the gateway Service; each line is one answer's status
# (000: no answer).
load() {
  innet bash -c 'while [[ ! -e $0/stop ]]; do
      curl -s -o /dev/null -m 10 -w "%{http_code}\n" -H "Authorization: Bearer $1" "$2" >>"$0/codes"
    done' "$T" "$TOKEN" "$GW/v1/restaurants/$RID/orders?limit=3" &
  echo $! >"$T/load.pid"
}
check_load() { # what: stop the loop, fail on a 5xx or an unanswered request
  touch "$T/stop" && wait "$(cat "$T/load.pid")" || true
  rm -f "$T/load.pid" "$T/stop"
  local summary
  summary=$(sort "$T/codes" | uniq -c | awk '{printf "%s×%s ", $1, $2}')
  log "$1 under load: $summary"
  ! grep -qE '^(000|5..)$' "$T/codes" || fail "$1: a request failed or went unanswered ($summary)"
  [[ -s $T/codes ]] || fail "$1: no request was made"
  rm -f "$T/codes"
}
load
sleep 2
kubectl -n dev rollout restart "deployment/$REL-orders" >/dev/null
kubectl -n dev rollout status "deployment/$REL-orders" --timeout 3m >/dev/null || fail "rollout of orders"
sleep 2
check_load "rolling restart of orders"

# The same images under a new tag: every Deployment rolls, each migrate init container runs.
# ctr needs the namespace's mounts too (containerd's socket is on its /run).
images=$(nsenter -t "$(cat "$WORK/holder.pid")" -n -m -- ctr -n k8s.io images ls -q | grep -E '^docker.io/partnerapi/[a-z]+:dev$')
for img in $images; do
  nsenter -t "$(cat "$WORK/holder.pid")" -n -m -- ctr -n k8s.io images tag --force "$img" "${img%:dev}:dev2" >/dev/null
done
load
sleep 2
t0=$(date +%s)
helm upgrade "$REL" charts/restaurant-partner-api -n dev --wait --timeout 3m \
  -f deploy/dev/values.yaml -f tools/cluster/local-images.yaml --set global.imageTag=dev2 >/dev/null ||
  fail "helm upgrade"
sleep 2
check_load "helm upgrade --wait to dev2 ($(($(date +%s) - t0)) s)"
n=$(kubectl -n dev get pods -o jsonpath='{range .items[*]}{.spec.containers[0].image}{"\n"}{end}' | grep -c ':dev2$')
((n >= 7)) || fail "after the upgrade only $n pods run a dev2 image"

# Back to the first revision's objects and images, under load as well.
load
sleep 2
t0=$(date +%s)
helm rollback "$REL" 1 -n dev --wait --timeout 3m >/dev/null || fail "helm rollback"
sleep 2
check_load "helm rollback --wait to revision 1 ($(($(date +%s) - t0)) s)"
n=$(kubectl -n dev get deployments -o jsonpath='{range .items[*]}{.spec.template.spec.containers[0].image}{"\n"}{end}' | grep -c ':dev2$' || true)
((n == 0)) || fail "after the rollback $n Deployments still run a dev2 image"

# --- the end-to-end test through the gateway Service -----------------------------------
# tools/e2e against the release, rolled back (E2E_TARGET): every area through the gateway
# Service with tokens from the real OAuth flow, answers checked against the OpenAPI
# document. It revokes its own tokens, so it runs after the load above.
kubectl -n dev get svc -o json | jq --arg rel "$REL-" --arg admin "$(val identity ADMIN_TOKEN)" \
  --argjson rate "$(helm -n dev get values "$REL" -a -o json | jq -r .gateway.config.RATE_LIMIT_PER_MINUTE)" '
  [.items[] | {name: (.metadata.name | ltrimstr($rel)), url: "http://\(.spec.clusterIP):\(.spec.ports[0].port)"}] as $svc
  | ($svc | map(select(.name | endswith("-internal")) | {key: (.name | rtrimstr("-internal")), value: .url}) | from_entries) as $internal
  | ($svc | map(select($internal[.name]) | {key: .name, value: .url}) | from_entries) as $public
  | {Gateway: $public.gateway, Identity: $public.identity, Orders: $public.orders, Public: $public, Internal: $internal,
     Secrets: {ADMIN_TOKEN: $admin}, RateLimitPerMinute: $rate}' >"$T/target.json"
(cd tools/e2e && innet env E2E_TARGET="$T/target.json" "$T/bin/e2e.test" -test.count 1 -test.v >"$T/e2e.log" 2>&1) ||
  { grep -E -- '--- FAIL|_test.go:' "$T/e2e.log" >&2; fail "tools/e2e through the gateway Service (log: $T/e2e.log)"; }
log "tools/e2e through the gateway Service: $(grep -c -- '--- PASS' "$T/e2e.log") passed, $(grep -c -- '--- SKIP' "$T/e2e.log") skipped (telemetry)"

# --- the partner operator by its chart ---------------------------------------------------
# Off in the dev values; turned on as docs/partneroperator.md says (its CRD first: helm
# installs a chart's CRDs only with the release), reading ADMIN_TOKEN from identity's
# Secret as in staging and prod. A PartnerClient applied with kubectl becomes a client in
# identity, and the demo owner completes the OAuth flow with it.
kubectl apply -f charts/partneroperator/crds/ >/dev/null
helm upgrade "$REL" charts/restaurant-partner-api -n dev --wait --timeout 3m --reuse-values \
  --set partneroperator.enabled=true --set partneroperator.secret.create=false \
  --set partneroperator.secret.existingSecret="$REL-identity" >/dev/null || fail "helm upgrade turning the operator on"
kubectl apply -f - >/dev/null <<EOF
apiVersion: partners.partnerapi.dev/v1alpha1
kind: PartnerClient
metadata: {name: cluster-pos, namespace: dev}
spec:
  clientId: cluster-pos
  displayName: Cluster POS
  type: public
  redirectUris: [http://127.0.0.1:8977/callback]
  allowedScopes: [svc.restaurant.read, svc.orders.read]
EOF
kubectl -n dev wait --for condition=Ready partnerclient/cluster-pos --timeout 90s >/dev/null ||
  { kubectl -n dev get partnerclient cluster-pos -o yaml >&2; fail "PartnerClient cluster-pos not Ready"; }
TOKEN=$(innet "$T/bin/partnerctl" token --base-url "$GW" --email owner@demo.example --password demo-password \
  --client-id cluster-pos --redirect-uri http://127.0.0.1:8977/callback --scope "svc.restaurant.read svc.orders.read" \
  --json | jq -r .access_token) || fail "partnerctl token with the PartnerClient's client"
out=$(call /v1/restaurants)
[[ $(tail -1 <<<"$out") == 200 ]] || fail "GET /v1/restaurants with the PartnerClient's token: $out"
log "partner operator: PartnerClient cluster-pos Ready, OAuth flow completed with it, GET /v1/restaurants: 200"
# Deleting it suspends the client in identity and revokes its grants (the finalizer): its
# token is refused once the gateway's grant cache expires. PartnerClients go before the
# operator does, or their finalizer holds them and their namespace (docs/partneroperator.md).
t0=$(date +%s)
kubectl -n dev delete partnerclient cluster-pos --wait --timeout 90s >/dev/null || fail "deleting PartnerClient cluster-pos"
for ((i = 0; i < 60; i++)); do
  out=$(call /v1/restaurants)
  [[ $(tail -1 <<<"$out") == 200 ]] || break
  sleep 1
done
[[ $(tail -1 <<<"$out") == 403 ]] || fail "GET /v1/restaurants with the deleted PartnerClient's token: $out"
log "partner operator: PartnerClient deleted, its token refused (403) $(($(date +%s) - t0)) s later"

# --- staging and prod -------------------------------------------------------------------
helm uninstall "$REL" -n dev --wait >/dev/null
kubectl delete namespace dev --wait >/dev/null
# The Secrets those values name (docs/deploy.md lists their keys), with random values, and
# the in-chart Postgres and Redis (external-local.yaml) in place of external ones.
secrets() { # namespace
  local ns=$1 db="postgres://partnerapi:partnerapi-dev@$REL-postgresql:5432/partnerapi?sslmode=disable"
  tok() { openssl rand -hex 16; }
  key() { openssl rand -base64 32; }
  mk() { kubectl -n "$ns" create secret generic "$@" >/dev/null; }
  kubectl create namespace "$ns" >/dev/null
  local events=$(tok) ingest=$(tok)
  mk partner-api-internal-context --from-literal INTERNAL_CONTEXT_KEYS="k1:$(key)"
  mk partner-api-gateway --from-literal REDIS_URL="redis://$REL-redis:6379/0"
  mk partner-api-identity --from-literal DATABASE_URL="$db" --from-literal SIGNING_KEY_ENCRYPTION_KEY="$(key)" \
    --from-literal ADMIN_TOKEN="$(tok)" --from-literal EVENTS_TOKEN="$events"
  for p in orders accounting; do
    mk "partner-api-$p" --from-literal DATABASE_URL="$db" --from-literal CURSOR_KEY="$(key)" \
      --from-literal INGEST_TOKEN="$ingest" --from-literal EVENTS_TOKEN="$events"
  done
  mk partner-api-menus --from-literal DATABASE_URL="$db" --from-literal INGEST_TOKEN="$ingest" --from-literal EVENTS_TOKEN="$events"
  mk partner-api-events --from-literal DATABASE_URL="$db" --from-literal EVENTS_TOKEN="$events" \
    --from-literal WEBHOOK_SECRET_KEYS="k1:$(key)"
  mk partner-api-catalogimport --from-literal DATABASE_URL="$db" --from-literal EVENTS_TOKEN="$events"
}
for env in staging prod; do
  secrets "$env"
  overlays=(-f tools/cluster/external-local.yaml)
  [[ $env != prod ]] || overlays+=(-f tools/cluster/prod-local.yaml)
  install "$env" -f "deploy/$env/values.yaml" "${overlays[@]}"
  # Staging makes room for prod; prod goes with the cluster.
  [[ $env == prod ]] || { helm uninstall "$REL" -n "$env" --wait >/dev/null && kubectl delete namespace "$env" --wait >/dev/null; }
done
log "PASS"
