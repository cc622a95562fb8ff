// Command promtool-binary builds (once) the promtool the alert-rule tests run, and prints
// its path:
//
//	cd tools && GOWORK=off go run ./promtool/cmd/promtool-binary
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"partnerapi.dev/tools/promtool"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	bin, err := promtool.Binary(ctx, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(bin)
}
