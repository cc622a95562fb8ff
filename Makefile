# Restaurant Partner API — run `make help` for the targets.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# Every Go module (each built and tested on its own with GOWORK=off, so a team can take one
# away) and every binary built into bin/ come from the process registry,
# tools/registry/processes.json: a new process is one entry there, not an edit here.
REGISTRY := cd tools && GOWORK=off go run ./cmd/registry
MODULES := $(shell $(REGISTRY) modules)
COMMANDS := $(shell $(REGISTRY) commands)
ifeq ($(strip $(MODULES)),)
$(error the process registry did not answer: run "cd tools && GOWORK=off go run ./cmd/registry modules" to see why)
endif

GOLANGCI_LINT_VERSION := v2.15.0
TOOLS_BIN := $(CURDIR)/.cache/bin
TEST_FLAGS ?= -race -count=1 -timeout 15m
# The inner loop's flags (make test-short, make test-one): no race detector, -short skips the
# chart dry-run against a kube-apiserver and the other slow tests that honour it, and no -count=1:
# a package whose code, test files and environment did not change since its last pass is taken
# from go test's cache ("(cached)"; the throwaway servers keep their ports from run to run).
# SHORT_FLAGS="-short -count=1" runs every test again.
SHORT_FLAGS ?= -short -timeout 15m
# Fuzz targets that make test runs for FUZZ_TIME each, as module:package:target.
FUZZ_TARGETS := gateway:./internal/server:FuzzPartnerRoutes services/orders:./internal/api:FuzzOrderRoutes \
  services/menus:./internal/api:FuzzWriteBodies services/catalogimport:./internal/api:FuzzWriteBodies \
  services/accounting:./internal/api:FuzzWriteBodies services/events:./internal/api:FuzzWriteBodies
# A count of generated inputs (Nx), not a duration: with a duration, Go 1.26's fuzzing coordinator
# can report its own deadline as a failure ("context deadline exceeded", no failing input) when a
# busy machine starves the workers at the end (golang/go#75804, fixed in Go 1.27). A count has no
# deadline: a busy machine only takes longer, and a hanging input fails on -timeout with a stack.
FUZZ_TIME ?= 20000x
# How many modules (and fuzz targets) tools/cmd/testrun tests at once: one at a time leaves the CPUs
# idle while tests wait on Postgres, Redis, browsers and the processes they start, and a few side by
# side keep 2 vCPUs busy. Each job's output is printed whole when it ends; TEST_JOBS=1 runs one at a time.
TEST_JOBS ?= 3
# go test links every test binary it runs, and the tests build the system's binaries: linked
# without DWARF (-ldflags=-w), which nothing in a test run reads (stack traces and race reports come
# from the binary's own tables), each link takes about a third less CPU.
TESTRUN := GOFLAGS="$(strip $(GOFLAGS) -ldflags=-w)" go run ./tools/cmd/testrun
# The longest modules, which a clone that has no times of its own yet (.cache/testrun-times.json)
# starts first, so that none of them starts last and runs alone at the end.
SLOW_MODULES := tools services/identity
TEST_ORDER = $(filter $(SLOW_MODULES),$(MODULES)) $(filter-out $(SLOW_MODULES),$(MODULES))
BENCH ?= .
BENCH_TIME ?= 2s
BENCH_ORDERS ?= 1000000
BENCH_SCALE_ORDERS ?= 10000000

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: apidocs ## Build every binary into bin/
	@mkdir -p bin
	go build -o bin/ $(COMMANDS)

.PHONY: run
run: build ## Start the whole system locally with demo data and print a demo token (Ctrl-C stops it); TRACING=1 also runs Jaeger
	bin/devstack run $(if $(filter 1,$(TRACING)),--tracing)

.PHONY: test
test: partner-client apidocs ## Run every module's tests (-race, real Postgres and Redis) and the chart checks
	@# The kube-apiserver and etcd of the chart dry-run and the operator's tests build in the
	@# background on a machine that lacks them (minutes, once) while the other modules are tested;
	@# the tests that need them wait for that build under its lock (and say why if it failed).
	@mkdir -p .cache && (cd tools && GOWORK=off go run ./envtest/cmd/envtest-binaries > ../.cache/envtest-binaries.log 2>&1 &)
	@# Likewise Jaeger, which the end-to-end test exports traces to (about 4 minutes, once).
	@(cd tools && GOWORK=off go run ./jaeger/cmd/jaeger-binary > ../.cache/jaeger-binary.log 2>&1 &)
	@# And promtool, which checks and unit-tests the chart's alert rules.
	@(cd tools && GOWORK=off go run ./promtool/cmd/promtool-binary > ../.cache/promtool-binary.log 2>&1 &)
	go run ./tools/cmd/devstack env -- $(MAKE) --no-print-directory test-modules

.PHONY: envtest-binaries
envtest-binaries: ## Build (once, cached in ~/.cache/partnerapi) the kube-apiserver and etcd the chart dry-run uses
	cd tools && GOWORK=off go run ./envtest/cmd/envtest-binaries

.PHONY: promtool-binary
promtool-binary: ## Build (once, cached in ~/.cache/partnerapi) the promtool that checks the chart's alert rules
	cd tools && GOWORK=off go run ./promtool/cmd/promtool-binary

.PHONY: jaeger-binary
jaeger-binary: ## Build (once, cached in ~/.cache/partnerapi) the Jaeger backend of the end-to-end test and make run TRACING=1
	cd tools && GOWORK=off go run ./jaeger/cmd/jaeger-binary

.PHONY: cluster-binaries
cluster-binaries: ## Build (once, cached in ~/.cache/partnerapi next to the envtest binaries) kubelet, controller manager, scheduler, kube-proxy, kubectl, CoreDNS and helm for the local cluster
	cd tools && GOWORK=off go run ./envtest/cmd/envtest-binaries -cluster

IMAGE_TAG ?= dev

.PHONY: images
images: ## Write the image archive of every process and of the node's pause image into .cache/images, without a container engine (IMAGE_TAG, default dev)
	cd tools && GOWORK=off go run ./cmd/images -out ../.cache/images -tag $(IMAGE_TAG)

# The local single-node cluster: binaries and images first (cached), then the node inside a
# network + mount namespace of its own; KUBECONFIG=.run/cluster/kubeconfig from the host.
CLUSTER_BINS = cd tools && GOWORK=off go run ./envtest/cmd/envtest-binaries -cluster

.PHONY: cluster-up
cluster-up: ## Start a single-node Kubernetes (v1.35.4) with every image imported; KUBECONFIG=.run/cluster/kubeconfig (root; Debian containerd runc containernetworking-plugins iptables socat)
	@mkdir -p .cache && bins=$$($(CLUSTER_BINS) 2>>../.cache/envtest-binaries.log) && \
	  cd tools && GOWORK=off go run ./cmd/images -out ../.cache/images -tag dev -databases -coredns $$(echo "$$bins" | sed -n 2p)/coredns && cd .. && \
	  BIN=$$(echo "$$bins" | sed -n 1p) NODE_BIN=$$(echo "$$bins" | sed -n 2p) IMAGES=.cache/images tools/cluster/cluster.sh up

.PHONY: cluster-down
cluster-down: ## Stop the local cluster; fails when a process, mount point or cgroup of it is left behind
	tools/cluster/cluster.sh down

.PHONY: test-cluster
test-cluster: partner-client ## On a local cluster (cluster-up, then down even on failure): install dev, seed, OAuth token, a call per area through the gateway Service, rolling restart and helm upgrade under load, staging and prod Ready (root)
	tools/cluster/test.sh

.PHONY: test-short
test-short: partner-client apidocs ## The inner loop: every module's tests without -race, fuzzing or the chart dry-run (-short), on one shared Postgres and Redis
	go run ./tools/cmd/devstack env -- $(MAKE) --no-print-directory test-each TEST_FLAGS="$(SHORT_FLAGS)"

.PHONY: test-one
test-one: partner-client apidocs ## One module's vet and tests as test-short runs them, e.g. make test-one M=services/menus (TEST_FLAGS=... for other flags)
	@test -n "$(M)" || { echo 'name the module: make test-one M=services/menus'; exit 1; }
	go run ./tools/cmd/devstack env -- $(MAKE) --no-print-directory test-each MODULES=$(M) TEST_FLAGS="$(if $(filter command line,$(origin TEST_FLAGS)),$(TEST_FLAGS),$(SHORT_FLAGS))"

.PHONY: skaffold-binary
skaffold-binary: ## Build (once, cached in ~/.cache/partnerapi) the skaffold of the local dev loop
	cd tools && GOWORK=off go run ./skaffold/cmd/skaffold-binary

.PHONY: dev
dev: ## skaffold dev on the local cluster (cluster-up first): a change under a process's module rebuilds and redeploys that process only (root; docs/develop.md)
	tools/cluster/skaffold.sh dev

.PHONY: test-skaffold
test-skaffold: ## On a local cluster (cluster-up, then down even on failure): skaffold run from a clean clone, then skaffold dev redeploys a changed identity and only it; prints first-run and save-to-serving times (root)
	tools/cluster/test-skaffold.sh

.PHONY: test-modules
test-modules: ## (inner) Test each module alone with GOWORK=off, and fuzz, TEST_JOBS at once; expects TEST_DATABASE_URL/TEST_REDIS_URL or starts servers itself
	$(TESTRUN) -jobs $(TEST_JOBS) -flags "$(TEST_FLAGS)" -fuzz-count $(FUZZ_TIME) $(addprefix -fuzz ,$(FUZZ_TARGETS)) $(TEST_ORDER)

.PHONY: test-each
test-each: ## (inner) Vet and test each of MODULES alone with GOWORK=off and TEST_FLAGS, TEST_JOBS at once
	$(TESTRUN) -jobs $(TEST_JOBS) -flags "$(TEST_FLAGS)" $(TEST_ORDER)

.PHONY: fuzz
fuzz: ## (inner) Run each fuzz target for FUZZ_TIME (a count of inputs) from its seed corpus; a failing input is saved under the package's testdata/fuzz
	$(TESTRUN) -jobs $(TEST_JOBS) -fuzz-count $(FUZZ_TIME) $(addprefix -fuzz ,$(FUZZ_TARGETS))

.PHONY: bench
bench: build ## Go benchmarks of every module, then the gateway load test (vegeta) against the running system
	go run ./tools/cmd/devstack env -- $(MAKE) --no-print-directory bench-modules
	bin/loadgen gateway

.PHONY: bench-modules
bench-modules:
	@for m in $(MODULES); do \
	  (cd $$m && GOWORK=off go test -run '^$$' -bench '$(BENCH)' -benchtime $(BENCH_TIME) -benchmem -timeout 60m ./...) || exit 1; \
	done

.PHONY: bench-orders
bench-orders: build ## Load BENCH_ORDERS orders (default 1000000), then measure every search filter class at the service and through the gateway
	bin/loadgen orders -orders $(BENCH_ORDERS)

.PHONY: bench-orders-scale
bench-orders-scale: build ## Load 1M and BENCH_SCALE_ORDERS (default 10M) orders (BENCH_DATA=DIR keeps both) and measure both in one run, request by request in turn, in 5 rounds: every search class's p99 change
	bin/loadgen orders -orders $(BENCH_SCALE_ORDERS) -compare-orders 1000000 -requests 1000 -warmup 100 -rounds 5 $(if $(BENCH_DATA),-data $(BENCH_DATA)/$(BENCH_SCALE_ORDERS) -compare-data $(BENCH_DATA)/1000000) $(if $(BENCH_SHARED_BUFFERS),-shared-buffers $(BENCH_SHARED_BUFFERS))

.PHONY: bench-services
bench-services: build ## Load the bench data set (BENCH_ORDERS orders, their accounting records, the 2,000-item catalog), then measure accounting, menus and catalog import at each service and through the gateway
	bin/loadgen services -orders $(BENCH_ORDERS)

.PHONY: bench-events
bench-events: ## The events figures: feed pages over a 10M-event log (built once, kept in database events_bench_10m), what the outbox adds to a write, commit-to-webhook delay
	go run ./tools/cmd/devstack env -- $(MAKE) --no-print-directory bench-events-run

.PHONY: bench-events-run
bench-events-run:
	cd pkg && GOWORK=off go test -run '^$$' -bench 'RecordOverhead' -benchtime 2000x ./outbox/
	cd services/events && GOWORK=off go test -run '^$$' -bench 'Feed10M' -benchtime 1000x -benchmem -timeout 60m ./internal/api/
	cd services/events && GOWORK=off go test -run '^$$' -bench 'CommitToWebhook/notify' -benchtime 300x ./internal/api/
	cd services/events && GOWORK=off go test -run '^$$' -bench 'CommitToWebhook/poll' -benchtime 10x ./internal/api/

.PHONY: faults
faults: build ## Fault suite (a few minutes): the system under partner load of every write while Postgres and Redis hang, crash and come back and a service restarts or rolls; writes the tables into docs/reliability.md
	bin/faults -out docs/reliability.md

.PHONY: lint
lint: $(TOOLS_BIN)/golangci-lint partner-client apidocs ## Run golangci-lint (pinned) on every module
	@for m in $(MODULES); do (cd $$m && GOWORK=off $(TOOLS_BIN)/golangci-lint run ./...) || exit 1; done

$(TOOLS_BIN)/golangci-lint:
	GOBIN=$(TOOLS_BIN) GOWORK=off go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

.PHONY: chart-deps
chart-deps: ## helm dependency build for every chart: each process chart (the library chart charts/common), then the umbrella
	@command -v helm >/dev/null 2>&1 || { \
	  echo "make chart-deps needs helm (Helm 3), which is not on PATH. Build it from the Go module proxy, at the version tools/go.mod uses:"; \
	  echo "  GOBIN=$(TOOLS_BIN) go install helm.sh/helm/v3/cmd/helm@$$(cd tools && GOWORK=off go list -m -f '{{.Version}}' helm.sh/helm/v3) && export PATH=$(TOOLS_BIN):\$$PATH"; \
	  echo "or install a release: https://helm.sh/docs/intro/install/"; exit 1; }
	@for c in $$($(REGISTRY) charts); do helm dependency build $$c || exit 1; done

# controller-gen, pinned, from the Go module proxy: the PartnerClient CRD, deepcopy and RBAC.
CONTROLLER_GEN := sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0

.PHONY: gen
gen: ## Regenerate generated files (pkg/apispec/openapi.json from openapi.yaml; from it the Go client tools/partnerclient, which is not committed)
	cd pkg && GOWORK=off go generate ./...
	$(MAKE) --no-print-directory partner-client
	cd services/partneroperator && GOWORK=off go run $(CONTROLLER_GEN) object paths=./api/... crd rbac:roleName=partneroperator paths=./... output:crd:dir=config/crd output:rbac:dir=config/rbac
	cp services/partneroperator/config/crd/partners.partnerapi.dev_partnerclients.yaml charts/partneroperator/crds/

.PHONY: partner-client
# The client is generated, not committed. An unchanged client keeps its file's modification time, so
# that the sources stamp of the test tiers (and with it go test's cache) stays the same.
partner-client: ## Generate the Go partner client (tools/partnerclient) from the OpenAPI document: the end-to-end test calls through it
	@mkdir -p .cache && cd tools/partnerclient && { [ ! -f client.gen.go ] || cp -p client.gen.go ../../.cache/client.gen.go.prev; } && \
	  GOWORK=off go generate . && \
	  { ! cmp -s client.gen.go ../../.cache/client.gen.go.prev || cp -p ../../.cache/client.gen.go.prev client.gen.go; }; \
	  rm -f ../../.cache/client.gen.go.prev

.PHONY: apidocs
# The pages are build output, not committed: rendered again only when an input changed.
apidocs: ## Render the gateway's /docs pages into gateway/internal/apidocs/pages (Redocly pinned by tools/apicheck/redocly, Node 20.19 or later) when the OpenAPI document, the CLI or the renderer changed; build and the test targets run it
	cd tools && GOWORK=off go run ./cmd/apidocs -root ..

.PHONY: gen-check
gen-check: ## Fail when a generated file is stale
	@$(MAKE) --no-print-directory gen
	@git diff --exit-code -- pkg/apispec/openapi.json services/partneroperator/api services/partneroperator/config charts/partneroperator/crds || { echo "generated files are stale: run make gen and commit"; exit 1; }

.PHONY: tidy
tidy: ## go mod tidy in every module
	@for m in $(MODULES); do (cd $$m && GOWORK=off go mod tidy) || exit 1; done

.PHONY: clean
clean: ## Remove build output (keeps .run/ local data)
	rm -rf bin gateway/internal/apidocs/pages/*.html gateway/internal/apidocs/pages/.rendered-from

.PHONY: clean-data
clean-data: ## Remove the local stack's data (.run/): the next make run starts fresh
	rm -rf .run
