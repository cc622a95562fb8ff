package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/telemetry"
)

func TestLogLevelAndFormat(t *testing.T) {
	for _, tc := range []struct {
		level, format string
		debug, err    bool
	}{{"debug", "", true, false}, {"", "", false, false}, {"INFO", "json", false, false}, {"warn", "text", false, false},
		{"error", "JSON", false, false}, {"loud", "", false, true}, {"", "xml", false, true}} {
		var out bytes.Buffer
		h, err := telemetry.NewLogHandler(&out, tc.level, tc.format)
		if (err != nil) != tc.err {
			t.Fatalf("%q %q: error %v", tc.level, tc.format, err)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "LOG_LEVEL") && !strings.Contains(err.Error(), "LOG_FORMAT") {
				t.Errorf("the error does not name the variable: %v", err)
			}
			continue
		}
		slog.New(h).Debug("debug line")
		if got := strings.Contains(out.String(), "debug line"); got != tc.debug {
			t.Errorf("%q: debug logged %v, want %v", tc.level, got, tc.debug)
		}
	}
}

// A line logged with a request's context names its trace, span and request,
// so a log pipeline can join it to the trace.
func TestLinesCarryTraceSpanAndRequest(t *testing.T) {
	var out bytes.Buffer
	h, err := telemetry.NewLogHandler(&out, "info", "json")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(h)
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("test").Start(telemetry.WithRequestID(context.Background(), "req_1"), "request")
	log.With("service", "orders").InfoContext(ctx, "served")
	span.End()
	var line map[string]any
	if err := json.Unmarshal(out.Bytes(), &line); err != nil {
		t.Fatalf("not one JSON object: %q", out.String())
	}
	if line["trace_id"] != span.SpanContext().TraceID().String() || line["span_id"] != span.SpanContext().SpanID().String() ||
		line["request_id"] != "req_1" || line["msg"] != "served" || line["service"] != "orders" {
		t.Errorf("line = %v", line)
	}
	out.Reset()
	log.Info("no request")
	if strings.Contains(out.String(), "trace_id") || strings.Contains(out.String(), "request_id") {
		t.Errorf("a line with no context names a trace: %s", out.String())
	}
}

// Each request served gives one access line (method, route template, status,
// duration, partner client) joined to its trace and request; a 500's error
// line too. Neither the query, the Authorization header nor the body appears
// in a line or a span.
func TestOneAccessLinePerRequestJoinedToItsTrace(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	exp := tracetest.NewInMemoryExporter()
	tel, err := telemetry.Setup(context.Background(), "test", telemetry.Options{SpanExporter: exp})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(context.Background())
	var out bytes.Buffer
	h, err := telemetry.NewLogHandler(&out, "info", "json")
	if err != nil {
		t.Fatal(err)
	}
	prev := slog.Default()
	slog.SetDefault(slog.New(h))
	t.Cleanup(func() { slog.SetDefault(prev) })

	app := httpx.New(httpx.Options{}, func(r fiber.Router) {
		r.Post("/v1/things/:id", func(c *fiber.Ctx) error {
			httpx.SetClientID(c, "partner-1")
			if c.Params("id") == "broken" {
				return errors.New("the store broke")
			}
			return c.SendString("ok")
		})
	})
	const secret = "sekrit-token-value"
	for _, id := range []string{"7", "broken"} {
		req := httptest.NewRequest("POST", "/v1/things/"+id+"?q="+secret, strings.NewReader(`{"password":"`+secret+`"}`))
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("X-Request-Id", "req_"+id)
		if _, err := app.Test(req); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Contains(out.String(), secret) {
		t.Errorf("a log line carries the token, query or body: %s", out.String())
	}
	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans", len(spans))
	}
	for _, s := range spans {
		for _, a := range s.Attributes {
			if strings.Contains(a.Value.String(), secret) {
				t.Errorf("span attribute %s carries the token, query or body: %s", a.Key, a.Value.String())
			}
		}
	}
	var access []map[string]any
	var failed map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var line map[string]any
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		switch line["msg"] {
		case "request":
			access = append(access, line)
		case "request failed":
			failed = line
		}
	}
	if len(access) != 2 {
		t.Fatalf("access lines: %v", access)
	}
	for i, want := range []struct {
		id     string
		status float64
		level  string
	}{{"7", 200, "INFO"}, {"broken", 500, "ERROR"}} {
		a, s := access[i], spans[i]
		if a["method"] != "POST" || a["route"] != "/v1/things/:id" || a["status"] != want.status || a["level"] != want.level ||
			a["client_id"] != "partner-1" || a["request_id"] != "req_"+want.id || a["duration_ms"] == nil ||
			a["trace_id"] != s.SpanContext.TraceID().String() || a["span_id"] != s.SpanContext.SpanID().String() {
			t.Errorf("access line %d = %v", i, a)
		}
	}
	if failed == nil || failed["trace_id"] != spans[1].SpanContext.TraceID().String() || failed["request_id"] != "req_broken" {
		t.Errorf("error line = %v", failed)
	}
}
