package delivery_test

import (
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"partnerapi.dev/services/contracts"
)

// A claim that finds nothing records nothing; one that sends is one trace
// named for it, its statements inside.
func TestDeliveryIsTracedOnlyWhenItSends(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)))
	e := newEnv(t)
	rcv := newReceiver(t)
	e.endpoint(rcv.srv.URL+"/orders", contracts.EventOrderCreated)
	exp.Reset()
	if n := e.run(); n != 0 {
		t.Fatalf("claimed %d with nothing due", n)
	}
	if spans := exp.GetSpans(); len(spans) != 0 {
		t.Fatalf("an idle claim recorded %d spans, first %q", len(spans), spans[0].Name)
	}
	e.appendEvents(ev(restA, contracts.EventOrderCreated))
	exp.Reset()
	if n := e.run(); n != 1 {
		t.Fatalf("claimed %d, want 1", n)
	}
	spans := exp.GetSpans()
	var roots []string
	for _, s := range spans {
		if !s.Parent.IsValid() {
			roots = append(roots, s.Name)
		}
		if s.SpanContext.TraceID() != spans[0].SpanContext.TraceID() {
			t.Errorf("span %q is outside the delivery's trace", s.Name)
		}
	}
	if len(roots) != 1 || roots[0] != "webhook delivery" || len(spans) < 2 {
		t.Errorf("roots %v of %d spans: want one webhook delivery trace with its statements", roots, len(spans))
	}
}
