// Command skaffold-binary builds (once) the skaffold of the local dev loop, and prints its
// path:
//
//	cd tools && GOWORK=off go run ./skaffold/cmd/skaffold-binary
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"partnerapi.dev/tools/skaffold"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	bin, err := skaffold.Binary(ctx, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(bin)
}
