// Command apidocs renders the API reference pages the gateway serves at
// /docs into gateway/internal/apidocs/pages, unless they are already
// rendered from the same inputs (see tools/apidocs). Run from the
// repository root by make apidocs:
//
//	cd tools && go run ./cmd/apidocs -root ..
package main

import (
	"context"
	"flag"

	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/pkg/lifecycle"
	"partnerapi.dev/tools/apidocs"
)

func main() { lifecycle.Main(run) }

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("apidocs", flag.ContinueOnError)
	root := fs.String("root", "..", "repository root")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return apidocs.Write(ctx, *root, apidocs.Pages(apispec.JSON(), apispec.NamingSetB()))
}
