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
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/telemetry"
)

// ShutdownTimeout bounds the whole shutdown sequence.
const ShutdownTimeout = 20 * time.Second

// Main sets up the process's logs (LOG_LEVEL, LOG_FORMAT), runs run with a context cancelled
// on SIGINT or SIGTERM, and exits 1 when it returns an error.
func Main(run func(ctx context.Context, args []string) error) {
	if err := telemetry.SetupLogging(os.Stderr, os.Getenv("LOG_LEVEL"), os.Getenv("LOG_FORMAT")); err != nil {
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

// Listener is one application and where it answers: the public surface on
// HTTP_ADDR, the internal one (metrics, operator API) on INTERNAL_HTTP_ADDR.
type Listener struct {
	App  *fiber.App
	Addr string
	// Listener, when set, is used instead of listening on Addr (tests use port 0).
	Listener net.Listener
}

// Serve answers HTTP on every listener until ctx is cancelled or one of them
// fails, then stops accepting and drains in-flight requests listener by
// listener in the order given, and runs the closers in order (databases,
// Redis, telemetry), all within ShutdownTimeout.
func Serve(ctx context.Context, listeners []Listener, closers ...Closer) error {
	stopping.Store(false)
	opened := make([]net.Listener, 0, len(listeners))
	for _, l := range listeners {
		ln := l.Listener
		if ln == nil {
			var err error
			if ln, err = net.Listen("tcp", l.Addr); err != nil {
				for _, o := range opened {
					_ = o.Close()
				}
				return fmt.Errorf("listen on %s: %w", l.Addr, err)
			}
		}
		opened = append(opened, lingerListener{ln})
	}
	errc := make(chan error, len(listeners))
	for i, l := range listeners {
		go func() { errc <- l.App.Listener(opened[i]) }()
		slog.Info("listening", "addr", opened[i].Addr().String())
	}

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	slog.Info("shutting down")
	// Not ready from now on: /readyz answers 503 while the listeners stop
	// accepting and drain, so a load balancer stops sending before the
	// process is gone.
	stopping.Store(true)
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	errs := []error{serveErr}
	for i, l := range listeners {
		if err := l.App.ShutdownWithContext(sctx); err != nil {
			errs = append(errs, fmt.Errorf("drain http on %s: %w", opened[i].Addr(), err))
		}
	}
	errs = append(errs, Close(sctx, closers...))
	return errors.Join(errs...)
}

// Go runs run in the background until ctx ends or the returned closer
// runs; the closer cancels run's context and waits for it to return (list
// it before the closers of what run uses, such as the database).
func Go(ctx context.Context, name string, run func(ctx context.Context)) Closer {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(ctx)
	}()
	return Closer{Name: name, Fn: func(stop context.Context) error {
		cancel()
		select {
		case <-done:
			return nil
		case <-stop.Done():
			return stop.Err()
		}
	}}
}

var stopping atomic.Bool

// Stopping reports whether this process is shutting down; readiness checks
// answer 503 once it is.
func Stopping() bool { return stopping.Load() }

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
