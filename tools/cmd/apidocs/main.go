// Command apidocs writes the API reference pages the gateway serves at /docs,
// one per menu naming set, as generated Go source (see tools/apidocs). Run
// from the repository root by make gen:
//
//	cd tools && go run ./cmd/apidocs -root ..
package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"

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
	for _, p := range apidocs.Pages(apispec.JSON(), apispec.NamingSetB()) {
		page, err := apidocs.Render(ctx, filepath.Join(*root, apidocs.RedoclyDir), p.Spec)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(*root, p.File), apidocs.GoSource(p.Package, p.Const, p.From, page), 0o644); err != nil {
			return err
		}
	}
	return nil
}
