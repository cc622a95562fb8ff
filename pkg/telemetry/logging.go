package telemetry

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// SetupLogging makes the process's default logger (slog and the standard log
// package alike) write to w at level (LOG_LEVEL: debug, info — the default
// when empty —, warn or error) in format (LOG_FORMAT: text — the default
// when empty — or json, one object a line for a log pipeline). Every line
// logged with a context (slog.InfoContext and friends) carries the trace_id
// and span_id of the span in it and the request_id of the request it serves.
func SetupLogging(w io.Writer, level, format string) error {
	h, err := NewLogHandler(w, level, format)
	if err != nil {
		return err
	}
	slog.SetDefault(slog.New(h))
	return nil
}

// NewLogHandler is the handler SetupLogging installs.
func NewLogHandler(w io.Writer, level, format string) (slog.Handler, error) {
	var lvl slog.Level
	switch strings.ToLower(strings.TrimSpace(level)) {
	case "debug":
		lvl = slog.LevelDebug
	case "", "info":
		lvl = slog.LevelInfo
	case "warn", "warning":
		lvl = slog.LevelWarn
	case "error":
		lvl = slog.LevelError
	default:
		return nil, fmt.Errorf("configuration: LOG_LEVEL %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch strings.ToLower(strings.TrimSpace(format)) {
	case "", "text":
		return contextHandler{slog.NewTextHandler(w, opts)}, nil
	case "json":
		return contextHandler{slog.NewJSONHandler(w, opts)}, nil
	}
	return nil, fmt.Errorf("configuration: LOG_FORMAT %q: use text or json", format)
}

type requestIDKey struct{}

// WithRequestID returns ctx carrying the id of the request it serves, which
// every line logged with it then carries.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID is the request id WithRequestID put in ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// contextHandler adds the trace and request a line was logged in.
type contextHandler struct{ slog.Handler }

func (h contextHandler) Handle(ctx context.Context, r slog.Record) error {
	if ctx != nil {
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
		}
		if id := RequestID(ctx); id != "" {
			r.AddAttrs(slog.String("request_id", id))
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h contextHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return contextHandler{h.Handler.WithAttrs(attrs)}
}

func (h contextHandler) WithGroup(name string) slog.Handler {
	return contextHandler{h.Handler.WithGroup(name)}
}
