// Command jaeger-binary builds (once) the Jaeger backend the end-to-end test
// and make run TRACING=1 export to, and prints its path:
//
//	cd tools && GOWORK=off go run ./jaeger/cmd/jaeger-binary
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"partnerapi.dev/tools/jaeger"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	bin, err := jaeger.Binary(ctx, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(bin)
}
