// Command loadgen runs the load tests behind make bench (gateway) and make bench-orders (orders).
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: loadgen gateway|orders")
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "loadgen %s: not implemented yet\n", os.Args[1])
	os.Exit(1)
}
