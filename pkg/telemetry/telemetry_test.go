package telemetry_test

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/telemetry"
)

func TestServerSpansAndMetrics(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	exp := tracetest.NewInMemoryExporter()
	tel, err := telemetry.Setup(context.Background(), "test", telemetry.Options{SpanExporter: exp})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(context.Background())
	app := httpx.NewInternal(httpx.Options{}, tel.Handler(), func(r fiber.Router) {
		r.Get("/v1/things/:id", func(c *fiber.Ctx) error { return c.SendString("ok") })
	})
	req := httptest.NewRequest("GET", "/v1/things/7", nil)
	// A caller's trace context is continued, not replaced.
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	if _, err := app.Test(req); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("spans: %+v", spans)
	}
	if !slices.Contains(otel.GetTextMapPropagator().Fields(), "traceparent") {
		t.Fatal("W3C propagator not installed")
	}
	resp, _ := app.Test(httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), "http_server_request") || !strings.Contains(string(body), "go_goroutines") {
		t.Fatalf("metrics missing: %.500s", body)
	}
}

func TestWithoutAnExporterSpansAreNotRecordedButTraceContextFlows(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	tel, err := telemetry.Setup(context.Background(), "test", telemetry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(context.Background())
	carrier := propagation.MapCarrier{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	ctx := otel.GetTextMapPropagator().Extract(context.Background(), carrier)
	ctx, span := otel.Tracer("test").Start(ctx, "work")
	defer span.End()
	if span.IsRecording() {
		t.Error("a span is recorded with no exporter configured")
	}
	out := propagation.MapCarrier{}
	otel.GetTextMapPropagator().Inject(ctx, out)
	if !strings.HasPrefix(out["traceparent"], "00-4bf92f3577b34da6a3ce929d0e0e4736-") {
		t.Errorf("trace context not carried on: %q", out["traceparent"])
	}
}

// Each readiness check's last outcome is a metric, so an alert can name the
// dependency that is down.
func TestDependencyReadinessIsAMetric(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	tel, err := telemetry.Setup(context.Background(), "test", telemetry.Options{SpanExporter: tracetest.NewInMemoryExporter()})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(context.Background())
	down := errors.New("refused")
	var probe trace.SpanContext
	app := httpx.NewInternal(httpx.Options{Ready: []httpx.Check{
		{Name: "database", Fn: func(ctx context.Context) error { probe = trace.SpanContextFromContext(ctx); return nil }},
		{Name: "redis", Fn: func(context.Context) error { return down }},
	}}, tel.Handler(), nil)
	if resp, err := app.Test(httptest.NewRequest("GET", "/readyz", nil)); err != nil || resp.StatusCode != 503 {
		t.Fatalf("readyz: %v %v", resp, err)
	}
	// What a probe calls is asked to record nothing (no trace per probe
	// at identity, say).
	if !probe.IsValid() || probe.IsSampled() {
		t.Errorf("a readiness check ran with trace context %v, want a valid one not sampled", probe)
	}
	resp, _ := app.Test(httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{`dependency_ready{check="database"`, `dependency_ready{check="redis"`} {
		i := strings.Index(string(body), want)
		if i < 0 {
			t.Fatalf("%s missing: %.2000s", want, body)
		}
		line := string(body[i:])
		line = line[:strings.IndexByte(line, '\n')]
		if wantUp := strings.Contains(want, "database"); strings.HasSuffix(line, " 1") != wantUp {
			t.Errorf("%s", line)
		}
	}
}
