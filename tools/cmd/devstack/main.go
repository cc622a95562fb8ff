// Command devstack runs the whole system on one machine.
//
//	devstack run            build output in bin/, Postgres and Redis from
//	                        DATABASE_URL/REDIS_URL or started locally with data
//	                        in .run/, migrate, seed once, start every process,
//	                        print a demo token; Ctrl-C stops everything. A
//	                        process that stops cleanly (SIGTERM) is started
//	                        again; one that crashes stops everything
//	devstack env -- CMD...  run CMD with TEST_DATABASE_URL and TEST_REDIS_URL
//	                        pointing at real servers (the given ones, or
//	                        throwaway servers stopped afterwards)
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"partnerapi.dev/pkg/lifecycle"
)

func main() { lifecycle.Main(run) }

const usage = `devstack runs the whole system on one machine.

Usage:
  devstack run [flags]         Postgres and Redis from DATABASE_URL/REDIS_URL or started
                               locally, migrate, seed once, start every process, print a
                               demo token; Ctrl-C stops everything (devstack run -h: flags)
  devstack env -- CMD [ARGS]   run CMD with TEST_DATABASE_URL and TEST_REDIS_URL pointing at
                               real servers (the given ones, or throwaway servers)
`

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: devstack run | devstack env -- command [args...]")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Print(usage)
		return nil
	case "run":
		return runStack(ctx, args[1:])
	case "env":
		rest := args[1:]
		if len(rest) > 0 && rest[0] == "--" {
			rest = rest[1:]
		}
		if len(rest) == 0 {
			return errors.New("usage: devstack env -- command [args...]")
		}
		return withTestInfra(ctx, rest)
	}
	return fmt.Errorf("unknown subcommand %q", args[0])
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, "devstack: "+format+"\n", args...) }
