// Package telemetry bootstraps OpenTelemetry for a process: trace and metric
// providers, W3C propagation, OTLP export when OTEL_EXPORTER_OTLP_ENDPOINT is
// set, and a Prometheus handler for /metrics.
package telemetry

import (
	"context"
	"errors"
	"net/http"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Telemetry holds the installed providers.
type Telemetry struct {
	Tracer   *sdktrace.TracerProvider
	Meter    *sdkmetric.MeterProvider
	Registry *prometheus.Registry
}

// Options tunes Setup; the zero value is what processes use.
type Options struct {
	// SpanExporter replaces the OTLP exporter (tests use an in-memory one).
	SpanExporter sdktrace.SpanExporter
}

// Setup installs global providers for service and returns them. Traces are
// recorded and exported over OTLP/HTTP only when OTEL_EXPORTER_OTLP_ENDPOINT
// (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, sampled as OTEL_TRACES_SAMPLER
// says (default: parent-based, always on); metrics are always on /metrics and
// also pushed over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_METRICS_ENDPOINT) is set.
func Setup(ctx context.Context, service string, opts Options) (*Telemetry, error) {
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithProcessRuntimeName(),
		resource.WithAttributes(attribute.String("service.name", serviceName(service))))
	if err != nil {
		return nil, err
	}
	// The signal-specific endpoints export that signal alone.
	otlp := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	otlpMetrics := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != ""

	sampler, err := envSampler()
	if err != nil {
		return nil, err
	}
	tpOpts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res), sdktrace.WithSampler(noOrphanClients{sampler})}
	switch {
	case opts.SpanExporter != nil:
		tpOpts = append(tpOpts, sdktrace.WithSyncer(opts.SpanExporter))
	case otlp:
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, err
		}
		tpOpts = append(tpOpts, sdktrace.WithBatcher(exp))
	default:
		// Spans with nowhere to go are not recorded: they would cost every
		// request their attributes and timing for nothing. Trace context is
		// still propagated.
		tpOpts = append(tpOpts, sdktrace.WithSampler(sdktrace.NeverSample()))
	}
	tp := sdktrace.NewTracerProvider(tpOpts...)

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	promExp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, err
	}
	mpOpts := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithReader(promExp)}
	if otlpMetrics {
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
	return &Telemetry{Tracer: tp, Meter: mp, Registry: reg}, nil
}

func serviceName(fallback string) string {
	if v := os.Getenv("OTEL_SERVICE_NAME"); v != "" {
		return v
	}
	return fallback
}

// Handler serves the Prometheus registry.
func (t *Telemetry) Handler() http.Handler {
	return promhttp.HandlerFor(t.Registry, promhttp.HandlerOpts{})
}

// Shutdown flushes and stops both providers.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	return errors.Join(t.Tracer.Shutdown(ctx), t.Meter.Shutdown(ctx))
}
