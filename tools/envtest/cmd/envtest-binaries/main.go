// Command envtest-binaries builds (once) the kube-apiserver and etcd that the chart
// checks' server-side dry-run uses, and prints the directory holding them:
//
//	cd tools && GOWORK=off go run ./envtest/cmd/envtest-binaries
//
// The output can be used as KUBEBUILDER_ASSETS for other envtest-based tests. With
// -cluster it then builds the node components of the local cluster (kubelet, controller
// manager, scheduler, kube-proxy, kubectl, CoreDNS, helm, kube-router) and prints their
// directory too.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"partnerapi.dev/tools/envtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cluster := flag.Bool("cluster", false, "also build the node components of the local cluster")
	flag.Parse()
	dir, err := envtest.Binaries(ctx, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(dir)
	if *cluster {
		dir, err := envtest.ClusterBinaries(ctx, os.Stderr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(dir)
	}
}
