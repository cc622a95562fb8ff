package server_test

import (
	"context"
	"net"
	"testing"

	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"partnerapi.dev/pkg/telemetry"
)

// BenchmarkAuthorizedRequest is the hot path: a token already verified
// (cache), a grant already fetched (cache), the Redis rate limit, the
// boundary check, signing the internal context and proxying to a local
// upstream over a pooled connection.
func BenchmarkAuthorizedRequest(b *testing.B) { benchAuthorized(b) }

// BenchmarkAuthorizedRequestTelemetry is the same request with the
// process's telemetry as in production with a trace exporter
// (telemetry.Setup: every span recorded and handed to an exporter that
// drops it; metrics aggregated for /metrics).
func BenchmarkAuthorizedRequestTelemetry(b *testing.B) {
	b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	b.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	tel, err := telemetry.Setup(context.Background(), "gateway-bench", telemetry.Options{SpanExporter: tracetest.NewNoopExporter()})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = tel.Shutdown(context.Background())
		otel.SetTracerProvider(noop.NewTracerProvider())
		otel.SetMeterProvider(metricnoop.NewMeterProvider())
	}()
	benchAuthorized(b)
}

func benchAuthorized(b *testing.B) {
	e := newEnv(b)
	e.vars["RATE_LIMIT_PER_MINUTE"] = "1000000000"
	e.vars["GRANT_CACHE_TTL"] = "1h"
	g := e.start(nil, "")
	tok := e.id.token(b, tokenOpts{})
	handler := g.app.Handler()
	path := "/v1/restaurants/" + restA + "/orders?start_date=2026-01-01&end_date=2026-01-31"
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50000}
	run := func() int {
		var req fasthttp.Request
		req.Header.SetMethod("GET")
		req.SetRequestURI(path)
		req.Header.Set("Authorization", "Bearer "+tok)
		var ctx fasthttp.RequestCtx
		ctx.Init(&req, addr, nil)
		handler(&ctx)
		return ctx.Response.StatusCode()
	}
	if s := run(); s != 200 {
		b.Fatalf("warm-up answered %d", s)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s := run(); s != 200 {
			b.Fatalf("answered %d", s)
		}
	}
}
