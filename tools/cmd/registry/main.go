// Command registry prints what the Makefile needs from the process registry
// (tools/registry/processes.json), one line, space-separated:
//
//	registry modules     every Go module directory
//	registry commands    every main package built into bin/ (./path)
//	registry processes   the process names in start order
//	registry charts      the chart directories: processes first, the umbrella last
package main

import (
	"fmt"
	"os"
	"strings"

	"partnerapi.dev/tools/registry"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: registry modules | commands | processes | charts")
		os.Exit(2)
	}
	r := registry.System()
	var out []string
	switch os.Args[1] {
	case "modules":
		out = r.Modules()
	case "commands":
		out = r.Commands()
	case "processes", "charts":
		for _, p := range r.Processes {
			out = append(out, p.Name)
			if os.Args[1] == "charts" {
				out[len(out)-1] = p.ChartDir()
			}
		}
		if os.Args[1] == "charts" {
			out = append(out, registry.UmbrellaChart)
		}
	default:
		fmt.Fprintf(os.Stderr, "registry: unknown list %q\n", os.Args[1])
		os.Exit(2)
	}
	fmt.Println(strings.Join(out, " "))
}
