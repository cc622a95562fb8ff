// Package lifecycle runs a process: a signal-aware context, one run function,
// and an ordered, deadline-bound shutdown.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"
)

// GODEBUG is the Go runtime setting every process of the system runs with:
// its container image sets it, and so does devstack. schedtrace at its
// largest period (a scheduler summary on standard error every 24.8 days)
// keeps the runtime's monitor thread from sleeping deeply whenever all
// processors are idle, and from being woken by the next system call to poll
// every 20 µs while the process works: between requests at moderate load,
// that cycle cost a server a third of its CPU (docs/performance.md).
const GODEBUG = "schedtrace=2147483647"

// ShutdownTimeout bounds the whole shutdown sequence.
const ShutdownTimeout = 20 * time.Second

// Main sets the log level from LOG_LEVEL, runs run with a context cancelled
// on SIGINT or SIGTERM, and exits 1 when it returns an error.
func Main(run func(ctx context.Context, args []string) error) {
	if err := SetLogLevel(os.Getenv("LOG_LEVEL")); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// Closer is one step of the shutdown sequence.
type Closer struct {
	Name string
	Fn   func(ctx context.Context) error
}

// Serve answers HTTP on addr until ctx is cancelled, then stops accepting,
// drains in-flight requests, and runs the closers in order (databases, Redis,
// telemetry), all within ShutdownTimeout.
func Serve(ctx context.Context, app *fiber.App, addr string, closers ...Closer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ServeListener(ctx, app, ln, closers...)
}

// ServeListener is Serve on a listener the caller opened (tests use port 0).
func ServeListener(ctx context.Context, app *fiber.App, ln net.Listener, closers ...Closer) error {
	errc := make(chan error, 1)
	go func() { errc <- app.Listener(ln) }()
	slog.Info("listening", "addr", ln.Addr().String())

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	slog.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	errs := []error{serveErr}
	if err := app.ShutdownWithContext(sctx); err != nil {
		errs = append(errs, fmt.Errorf("drain http: %w", err))
	}
	errs = append(errs, Close(sctx, closers...))
	return errors.Join(errs...)
}

// Close runs closers in order and joins their errors.
func Close(ctx context.Context, closers ...Closer) error {
	var errs []error
	for _, c := range closers {
		if err := c.Fn(ctx); err != nil {
			errs = append(errs, fmt.Errorf("close %s: %w", c.Name, err))
		}
	}
	return errors.Join(errs...)
}
