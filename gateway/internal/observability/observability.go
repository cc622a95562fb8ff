// Package observability starts OpenTelemetry for the gateway through
// pkg/telemetry. pkg/telemetry.Setup currently fails on every start because it
// merges resource.Default() (newer semconv schema) with a semconv v1.26
// resource; until pkg fixes that, this package builds the same providers with
// a schemaless service resource, so the gateway still traces and serves
// /metrics. Remove the fallback once pkg/telemetry is fixed.
package observability

import (
	"context"
	"errors"
	"log/slog"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"partnerapi.dev/pkg/telemetry"
)

// Setup is telemetry.Setup, falling back to an equivalent set-up when
// pkg/telemetry fails on the resource schema conflict.
func Setup(ctx context.Context, service string, opts telemetry.Options) (*telemetry.Telemetry, error) {
	tel, err := telemetry.Setup(ctx, service, opts)
	if err == nil || !errors.Is(err, resource.ErrSchemaURLConflict) {
		return tel, err
	}
	slog.Warn("pkg/telemetry.Setup failed on a resource schema conflict; using the gateway's equivalent set-up", "error", err)
	name := service
	if v := os.Getenv("OTEL_SERVICE_NAME"); v != "" {
		name = v
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", name)))
	if err != nil {
		return nil, err
	}
	otlp := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	tpOpts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	switch {
	case opts.SpanExporter != nil:
		tpOpts = append(tpOpts, sdktrace.WithSyncer(opts.SpanExporter))
	case otlp:
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, err
		}
		tpOpts = append(tpOpts, sdktrace.WithBatcher(exp))
	}
	tp := sdktrace.NewTracerProvider(tpOpts...)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	promExp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, err
	}
	mpOpts := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithReader(promExp)}
	if otlp {
		mexp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			return nil, err
		}
		mpOpts = append(mpOpts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(mexp)))
	}
	mp := sdkmetric.NewMeterProvider(mpOpts...)
	otel.SetTracerProvider(tp)
	otel.SetMeterProvider(mp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return &telemetry.Telemetry{Tracer: tp, Meter: mp, Registry: reg}, nil
}
