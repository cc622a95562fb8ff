// Command yaml2json writes openapi.json from openapi.yaml (go generate).
package main

import (
	"fmt"
	"os"

	"partnerapi.dev/pkg/apispec/internal/specgen"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: yaml2json in.yaml out.json")
		os.Exit(2)
	}
	src, err := os.ReadFile(os.Args[1])
	if err == nil {
		var out []byte
		if out, err = specgen.Convert(src); err == nil {
			err = os.WriteFile(os.Args[2], out, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "yaml2json:", err)
		os.Exit(1)
	}
}
