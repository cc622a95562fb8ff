// Command seed generates the deterministic demo data set and loads it into
// running services through their admin and ingestion APIs.
//
//	seed [--seed 42] [--size demo|bench] --identity-url URL --orders-url URL
//
// ADMIN_TOKEN (identity's admin API) and INGEST_TOKEN (orders ingestion) come
// from the environment.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"partnerapi.dev/pkg/lifecycle"
	"partnerapi.dev/tools/seed"
)

func main() { lifecycle.Main(run) }

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	seedValue := fs.Uint64("seed", 42, "seed of the random source: same seed, same data")
	size := fs.String("size", string(seed.SizeDemo), "demo or bench")
	identityURL := fs.String("identity-url", "http://127.0.0.1:8081", "identity service base URL")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *size != string(seed.SizeDemo) && *size != string(seed.SizeBench) {
		return errors.New("--size must be demo or bench")
	}
	adminToken := os.Getenv("ADMIN_TOKEN")
	if adminToken == "" {
		return errors.New("ADMIN_TOKEN must be set (identity's admin API token)")
	}
	g := seed.Generator{Seed: *seedValue}
	client := seed.Client{}

	start := time.Now()
	dir := g.GenerateDirectory(seed.Size(*size))
	if err := client.LoadDirectory(ctx, *identityURL, adminToken, dir); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "seed: directory: %d organizations, %d restaurants, %d users, %d partner clients (%s)\n",
		len(dir.Organizations), len(dir.Restaurants), len(dir.Users), len(dir.PartnerClients), time.Since(start).Round(time.Millisecond))
	return nil
}
