// Command loadgen runs the load tests behind make bench, make bench-orders and
// make bench-services, each against a local stack it starts itself
// (bin/devstack, fresh data in a temporary folder, loopback only):
//
//	loadgen gateway   GET /v1/restaurants through the gateway, at identity directly
//	                  and through nginx: max throughput and p50/p99 at a fixed rate
//	loadgen orders    loads the bench data set (1,000,000 orders; -orders N for
//	                  another count), then p50/p99 of every search filter class and
//	                  of order details, at the orders service and through the gateway
//	loadgen services  loads the same data set with its accounting records and the
//	                  2,000-item bench catalog, then p50/p99 of the accounting reports,
//	                  refunds, workspace and corrections, the menus reads and writes,
//	                  and catalog import's plan and apply, at each service and through
//	                  the gateway; and the time the accounting bulk load takes
//
// Run from the repository root after make build (binaries are read from bin/).
// See docs/performance.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

func main() {
	if len(os.Args) < 2 || (os.Args[1] != "gateway" && os.Args[1] != "orders" && os.Args[1] != "services") {
		fmt.Fprintln(os.Stderr, "usage: loadgen gateway|orders|services [flags]   (loadgen <command> -h lists the flags)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "gateway":
		err = runGateway(ctx, os.Args[2:])
	case "orders":
		err = runOrders(ctx, os.Args[2:])
	case "services":
		err = runServices(ctx, os.Args[2:])
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "loadgen %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "loadgen: "+format+"\n", args...)
}

// withoutEnv is the environment minus the named variables, so devstack starts
// its own Postgres and Redis instead of using the caller's.
func withoutEnv(names ...string) []string {
	var out []string
next:
	for _, kv := range os.Environ() {
		for _, n := range names {
			if len(kv) > len(n) && kv[:len(n)+1] == n+"=" {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

func numCPU() int { return runtime.NumCPU() }
