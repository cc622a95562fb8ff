package server_test

import (
	"context"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"partnerapi.dev/pkg/telemetry"
)

func TestOneTraceAcrossGatewayAndService(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tel, err := telemetry.Setup(context.Background(), "gateway-test", telemetry.Options{SpanExporter: exp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })

	e := newEnv(t)
	var got string
	var parent trace.SpanContext
	svc := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("traceparent")
		ctx := otel.GetTextMapPropagator().Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		parent = trace.SpanContextFromContext(ctx)
		_, span := otel.Tracer("orders-test").Start(ctx, "orders handler", trace.WithSpanKind(trace.SpanKindServer))
		span.End()
		_, _ = w.Write([]byte(`{"data":{}}`))
	})
	e.vars["ORDERS_URL"] = svc.srv.URL
	g := e.start(nil, "")
	r := g.do(t, "GET", "/v1/restaurants/"+restA+"/orders", e.id.token(t, tokenOpts{}), nil)
	if r.status != 200 || got == "" || !parent.IsValid() {
		t.Fatalf("status %d traceparent %q", r.status, got)
	}
	byName := map[string]tracetest.SpanStub{}
	for _, s := range exp.GetSpans() {
		if s.SpanContext.TraceID() == parent.TraceID() {
			byName[s.Name] = s
		}
	}
	proxySpan, ok := byName["proxy orders"]
	if !ok {
		t.Fatalf("no proxy span in the trace; spans %v", names(exp.GetSpans()))
	}
	if proxySpan.SpanContext.SpanID() != parent.SpanID() {
		t.Errorf("service's parent is not the proxy span")
	}
	if _, ok := byName["orders handler"]; !ok {
		t.Errorf("service span not in the gateway's trace")
	}
	var server tracetest.SpanStub
	for _, s := range byName {
		if s.SpanKind == trace.SpanKindServer && s.Name != "orders handler" {
			server = s
		}
	}
	if !server.SpanContext.IsValid() || proxySpan.Parent.SpanID() != server.SpanContext.SpanID() {
		t.Errorf("gateway server span missing or not the proxy span's parent: %v", names(exp.GetSpans()))
	}
}

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name+"/"+s.SpanContext.TraceID().String()[:8])
	}
	return out
}
