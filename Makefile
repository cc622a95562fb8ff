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
# Fuzz targets that make test runs for FUZZ_TIME each, as module:package:target.
FUZZ_TARGETS := gateway:./internal/server:FuzzPartnerRoutes services/orders:./internal/api:FuzzOrderRoutes
FUZZ_TIME ?= 20s
BENCH ?= .
BENCH_TIME ?= 2s
BENCH_ORDERS ?= 1000000

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build every binary into bin/
	@mkdir -p bin
	go build -o bin/ $(COMMANDS)

.PHONY: run
run: build ## Start the whole system locally with demo data and print a demo token (Ctrl-C stops it)
	bin/devstack run

.PHONY: test
test: ## Run every module's tests (-race, real Postgres and Redis) and the chart checks
	@# The kube-apiserver and etcd of the chart dry-run and the operator's tests build in the
	@# background on a machine that lacks them (minutes, once) while the other modules are tested;
	@# the tests that need them wait for that build under its lock (and say why if it failed).
	@mkdir -p .cache && (cd tools && GOWORK=off go run ./envtest/cmd/envtest-binaries > ../.cache/envtest-binaries.log 2>&1 &)
	go run ./tools/cmd/devstack env -- $(MAKE) --no-print-directory test-modules

.PHONY: envtest-binaries
envtest-binaries: ## Build (once, cached in ~/.cache/partnerapi) the kube-apiserver and etcd the chart dry-run uses
	cd tools && GOWORK=off go run ./envtest/cmd/envtest-binaries

.PHONY: test-modules
test-modules: partner-client ## (inner) Test each module alone with GOWORK=off; expects TEST_DATABASE_URL/TEST_REDIS_URL or starts servers itself
	@for m in $(MODULES); do \
	  echo "== $$m: vet, test ($$(date +%T))"; \
	  (cd $$m && GOWORK=off go vet ./... && GOWORK=off go test $(TEST_FLAGS) ./...) || exit 1; \
	done
	@$(MAKE) --no-print-directory fuzz

.PHONY: fuzz
fuzz: ## (inner) Run each fuzz target for FUZZ_TIME; a failing input is saved under the package's testdata/fuzz
	@for f in $(FUZZ_TARGETS); do \
	  IFS=: read -r m p n <<< "$$f"; \
	  echo "== $$m: fuzz $$n for $(FUZZ_TIME) ($$(date +%T))"; \
	  (cd $$m && GOWORK=off go test -run '^$$' -fuzz "^$$n\$$" -fuzztime $(FUZZ_TIME) $$p) || exit 1; \
	done

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
bench-orders-scale: build ## Load 1M and 5M orders (BENCH_DATA=DIR keeps both) and measure both in one run, request by request in turn: every search class's p99 change
	bin/loadgen orders -orders 5000000 -compare-orders 1000000 -requests 1000 -warmup 100 $(if $(BENCH_DATA),-data $(BENCH_DATA)/5m -compare-data $(BENCH_DATA)/1m)

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
lint: partner-client $(TOOLS_BIN)/golangci-lint ## Run golangci-lint (pinned) on every module
	@for m in $(MODULES); do (cd $$m && GOWORK=off $(TOOLS_BIN)/golangci-lint run ./...) || exit 1; done

$(TOOLS_BIN)/golangci-lint:
	GOBIN=$(TOOLS_BIN) GOWORK=off go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

.PHONY: chart-deps
chart-deps: ## helm dependency build for every chart: each process chart (the library chart charts/common), then the umbrella
	@for c in $$($(REGISTRY) charts); do helm dependency build $$c || exit 1; done

# controller-gen, pinned, from the Go module proxy: the PartnerClient CRD, deepcopy and RBAC.
CONTROLLER_GEN := sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0

.PHONY: gen
gen: ## Regenerate generated files (pkg/apispec/openapi.json from openapi.yaml; the Go client tools/partnerclient from it)
	cd pkg && GOWORK=off go generate ./...
	$(MAKE) --no-print-directory partner-client
	cd services/partneroperator && GOWORK=off go run $(CONTROLLER_GEN) object paths=./api/... crd rbac:roleName=partneroperator paths=./... output:crd:dir=config/crd output:rbac:dir=config/rbac
	cp services/partneroperator/config/crd/partners.partnerapi.dev_partnerclients.yaml charts/partneroperator/crds/

.PHONY: partner-client
partner-client: ## Generate the Go partner client (tools/partnerclient, not tracked) from the OpenAPI document: the end-to-end test calls through it
	cd tools && GOWORK=off go generate ./partnerclient

.PHONY: gen-check
gen-check: ## Fail when a generated file is stale
	@$(MAKE) --no-print-directory gen
	@git diff --exit-code -- pkg/apispec/openapi.json services/partneroperator/api services/partneroperator/config charts/partneroperator/crds || { echo "generated files are stale: run make gen and commit"; exit 1; }

.PHONY: tidy
tidy: ## go mod tidy in every module
	@for m in $(MODULES); do (cd $$m && GOWORK=off go mod tidy) || exit 1; done

.PHONY: clean
clean: ## Remove build output (keeps .run/ local data)
	rm -rf bin

.PHONY: clean-data
clean-data: ## Remove the local stack's data (.run/): the next make run starts fresh
	rm -rf .run
