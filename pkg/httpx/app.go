package httpx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"partnerapi.dev/pkg/lifecycle"
	"partnerapi.dev/pkg/telemetry"
)

// DefaultBodyLimit is the largest request body accepted: 1 MiB.
const DefaultBodyLimit = 1 << 20

// IdleTimeout is how long a kept-alive connection may stay idle before the
// server closes it: longer than common HTTP clients keep idle connections
// in their pools (Go's http.Transport 90 s, .NET 1–2 min, OkHttp 5 min,
// nginx upstream keepalive 60 s, AWS load balancers 60–350 s), so it is the
// client that closes an idle connection and never the server just as the
// client sends a request on it (which the client sees as EOF, not an
// answer). The gateway keeps its upstream connections 10 s.
const IdleTimeout = 6 * time.Minute

// Check is one readiness dependency (database, Redis, an upstream).
type Check struct {
	Name string
	Fn   func(ctx context.Context) error
}

// Options configures an application.
type Options struct {
	// Name identifies the process in traces and logs.
	Name string
	// BodyLimit caps request bodies; 0 means DefaultBodyLimit.
	BodyLimit int
	// HeaderLimit caps the request line and headers; 0 means
	// DefaultHeaderLimit.
	HeaderLimit int
	// Ready lists what /readyz checks.
	Ready []Check
	// Before runs ahead of every route (after request id and recovery), for
	// process-wide middleware such as authentication.
	Before []fiber.Handler
	// NoTracing turns off the server spans and HTTP metrics.
	NoTracing bool
	// ReadTimeout and WriteTimeout bound one request; 0 means 30 s.
	ReadTimeout, WriteTimeout time.Duration
	// Polled are paths other processes ask several times a second (a
	// change list): like /healthz, they get no span, metric or access log
	// line, which would drown the rest. Their callers log failures.
	Polled []string
}

// New returns a Fiber application with the platform's edge behaviour, its
// routes registered by routes, and envelope answers for unknown paths (404) and
// unknown methods on known paths (405 with Allow).
func New(opts Options, routes func(r fiber.Router)) *fiber.App {
	if opts.BodyLimit == 0 {
		opts.BodyLimit = DefaultBodyLimit
	}
	if opts.HeaderLimit == 0 {
		opts.HeaderLimit = DefaultHeaderLimit
	}
	if opts.ReadTimeout == 0 {
		opts.ReadTimeout = 30 * time.Second
	}
	if opts.WriteTimeout == 0 {
		opts.WriteTimeout = 30 * time.Second
	}
	app := fiber.New(fiber.Config{
		AppName:        opts.Name,
		BodyLimit:      opts.BodyLimit,
		ReadBufferSize: opts.HeaderLimit,
		// One spelling per resource: /V1/... and a trailing slash are
		// unknown paths, not aliases.
		CaseSensitive:         true,
		StrictRouting:         true,
		DisableStartupMessage: true,
		ReadTimeout:           opts.ReadTimeout,
		WriteTimeout:          opts.WriteTimeout,
		IdleTimeout:           IdleTimeout,
		ErrorHandler:          func(c *fiber.Ctx, err error) error { return writeErrorWithID(c, err, opts.BodyLimit) },
	})
	app.Use(requestIDMiddleware, recoverMiddleware)
	if !opts.NoTracing {
		traced := serverTelemetry()
		app.Use(func(c *fiber.Ctx) error {
			if isOperational(c.Path()) || slices.Contains(opts.Polled, c.Path()) {
				return c.Next()
			}
			return traced(c)
		})
	}
	app.Get("/healthz", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"status": "ok"}) })
	app.Get("/readyz", readiness(opts.Ready))
	for _, h := range opts.Before {
		app.Use(h)
	}
	app.Use(checkRequestText(app))
	routes(app)
	app.Use(func(c *fiber.Ctx) error {
		if allow := allowedMethods(app, c.Path()); allow != "" {
			return MethodNotAllowed(allow)
		}
		return NotFound()
	})
	guardServer(app, opts)
	return app
}

// NewInternal returns the application of a process's internal listener
// (INTERNAL_HTTP_ADDR), which only the cluster reaches: /healthz, /readyz,
// /metrics when metrics is set, and the operator routes registered by routes
// (nil for none). /metrics has no other way in, so a public application can
// never expose it.
func NewInternal(opts Options, metrics http.Handler, routes func(r fiber.Router)) *fiber.App {
	return New(opts, func(r fiber.Router) {
		if metrics != nil {
			r.Get("/metrics", adaptor.HTTPHandler(metrics))
		}
		if routes != nil {
			routes(r)
		}
	})
}

func isOperational(path string) bool {
	return path == "/healthz" || path == "/readyz" || path == "/metrics"
}

// writeErrorWithID answers errors raised before the middleware chain ran (an
// oversized body is refused while reading), which have no request id yet.
func writeErrorWithID(c *fiber.Ctx, err error, bodyLimit int) error {
	if RequestID(c) == "" {
		id := c.Get(HeaderRequestID)
		if !ValidRequestID(id) {
			id = NewRequestID()
		}
		c.Locals(localsRequestID, id)
		c.SetUserContext(telemetry.WithRequestID(c.UserContext(), id))
		c.Set(HeaderRequestID, id)
	}
	if fe := (*fiber.Error)(nil); errors.As(err, &fe) && fe.Code == http.StatusRequestEntityTooLarge {
		err = PayloadTooLarge(bodyLimit)
	}
	return WriteError(c, err)
}

func recoverMiddleware(c *fiber.Ctx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			slog.ErrorContext(c.UserContext(), "panic while serving request", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = Internal()
		}
	}()
	return c.Next()
}

func readiness(checks []Check) fiber.Handler {
	ready, err := otel.GetMeterProvider().Meter("partnerapi.dev/pkg/httpx").Int64Gauge("dependency.ready",
		metric.WithDescription("1 when the dependency answered the last readiness check, 0 when it did not"))
	if err != nil {
		otel.Handle(err)
	}
	return func(c *fiber.Ctx) error {
		ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
		defer cancel()
		if lifecycle.Stopping() {
			return c.Status(http.StatusServiceUnavailable).JSON(fiber.Map{"status": "stopping"})
		}
		failed := map[string]string{}
		for _, ch := range checks {
			up := int64(1)
			// A probe every few seconds is no trace, here or where it calls.
			if err := ch.Fn(telemetry.Untraced(ctx)); err != nil {
				slog.WarnContext(ctx, "readiness check failed", "check", ch.Name, "error", err)
				failed[ch.Name] = "unavailable"
				up = 0
			}
			ready.Record(ctx, up, metric.WithAttributes(attribute.String("check", ch.Name)))
		}
		if len(failed) > 0 {
			return c.Status(http.StatusServiceUnavailable).JSON(fiber.Map{"status": "unavailable", "checks": failed})
		}
		return c.JSON(fiber.Map{"status": "ok"})
	}
}

// allowedMethods lists the methods registered for a path that matched no
// route, or "" when no method knows the path.
func allowedMethods(app *fiber.App, path string) string {
	seen := map[string]bool{}
	for _, r := range app.GetRoutes(true) {
		if r.Method == fiber.MethodHead || r.Method == "USE" || r.Path == "/" && path != "/" {
			continue
		}
		if MatchPath(r.Path, path) {
			seen[r.Method] = true
		}
	}
	if len(seen) == 0 {
		return ""
	}
	if seen[fiber.MethodGet] {
		seen[fiber.MethodHead] = true
	}
	methods := make([]string, 0, len(seen))
	for m := range seen {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	return strings.Join(methods, ", ")
}

// MatchPath reports whether a concrete path matches a Fiber route template
// with ":param" segments and a trailing "*".
func MatchPath(template, path string) bool {
	ts := strings.Split(strings.Trim(template, "/"), "/")
	ps := strings.Split(strings.Trim(path, "/"), "/")
	for i, t := range ts {
		if t == "*" {
			return true
		}
		if i >= len(ps) {
			return false
		}
		if strings.HasPrefix(t, ":") {
			if ps[i] == "" {
				return false
			}
			continue
		}
		if t != ps[i] {
			return false
		}
	}
	return len(ts) == len(ps)
}
