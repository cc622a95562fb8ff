package telemetry_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"partnerapi.dev/pkg/telemetry"
)

// A query, Redis command or call made with no operation around it (an idle
// poll, a readiness probe) starts no trace; the same client span inside an
// operation is recorded.
func TestClientSpansStartNoTrace(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	exp := tracetest.NewInMemoryExporter()
	tel, err := telemetry.Setup(context.Background(), "test", telemetry.Options{SpanExporter: exp})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(context.Background())
	tr := otel.Tracer("test")
	_, orphan := tr.Start(context.Background(), "SELECT outbox_events", trace.WithSpanKind(trace.SpanKindClient))
	orphan.End()
	ctx, job := tr.Start(context.Background(), "outbox relay")
	_, child := tr.Start(ctx, "DELETE outbox_events", trace.WithSpanKind(trace.SpanKindClient))
	child.End()
	job.End()
	var names []string
	for _, s := range exp.GetSpans() {
		names = append(names, s.Name)
	}
	if len(names) != 2 || names[0] != "DELETE outbox_events" || names[1] != "outbox relay" {
		t.Errorf("recorded %v, want the job and its query only", names)
	}
}

func TestSamplerFromEnvironment(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	for _, tc := range []struct {
		sampler, arg string
		recorded     bool
		err          bool
	}{{"", "", true, false}, {"always_off", "", false, false}, {"parentbased_traceidratio", "0", false, false},
		{"traceidratio", "1", true, false}, {"traceidratio", "2", false, true}, {"sometimes", "", false, true}} {
		t.Setenv("OTEL_TRACES_SAMPLER", tc.sampler)
		t.Setenv("OTEL_TRACES_SAMPLER_ARG", tc.arg)
		tel, err := telemetry.Setup(context.Background(), "test", telemetry.Options{SpanExporter: tracetest.NewInMemoryExporter()})
		if (err != nil) != tc.err {
			t.Fatalf("%s %s: error %v", tc.sampler, tc.arg, err)
		}
		if err != nil {
			continue
		}
		_, s := otel.Tracer("test").Start(context.Background(), "job")
		if s.IsRecording() != tc.recorded {
			t.Errorf("%s %s: recording %v", tc.sampler, tc.arg, s.IsRecording())
		}
		s.End()
		_ = tel.Shutdown(context.Background())
	}
}
