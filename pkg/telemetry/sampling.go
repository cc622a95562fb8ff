package telemetry

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strconv"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// noOrphanClients records no client span that would start a trace: a query,
// a Redis command or a call made by a background loop with no operation
// around it (a poll that found nothing, a readiness probe) would otherwise be
// a root trace of its own, one per poll and replica, all day. Work done in
// the background starts its own span first ("outbox relay", "webhook
// delivery"), so its client spans are recorded as its children.
type noOrphanClients struct{ sdktrace.Sampler }

func (s noOrphanClients) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	parent := trace.SpanContextFromContext(p.ParentContext)
	if p.Kind == trace.SpanKindClient && !parent.IsValid() {
		return sdktrace.SamplingResult{Decision: sdktrace.Drop}
	}
	return s.Sampler.ShouldSample(p)
}

func (s noOrphanClients) Description() string {
	return "NoOrphanClients{" + s.Sampler.Description() + "}"
}

// envSampler is the sampler OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG
// name, as the SDK reads them when no sampler is given (default: parent-based,
// always on).
func envSampler() (sdktrace.Sampler, error) {
	name, arg := os.Getenv("OTEL_TRACES_SAMPLER"), os.Getenv("OTEL_TRACES_SAMPLER_ARG")
	ratio := func() (sdktrace.Sampler, error) {
		if arg == "" {
			return sdktrace.TraceIDRatioBased(1), nil
		}
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return nil, fmt.Errorf("configuration: OTEL_TRACES_SAMPLER_ARG %q: use a ratio from 0 to 1", arg)
		}
		return sdktrace.TraceIDRatioBased(r), nil
	}
	switch name {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "traceidratio":
		return ratio()
	case "parentbased_traceidratio":
		r, err := ratio()
		if err != nil {
			return nil, err
		}
		return sdktrace.ParentBased(r), nil
	}
	return nil, fmt.Errorf("configuration: OTEL_TRACES_SAMPLER %q: use always_on, always_off, traceidratio or their parentbased_ forms", name)
}

// Untraced returns ctx carrying a trace context that is not sampled: a call
// made with it (a readiness probe's) asks the processes it reaches to record
// nothing, where a call with no trace context would start a trace there.
func Untraced(ctx context.Context) context.Context {
	var tid trace.TraceID
	var sid trace.SpanID
	_, _ = rand.Read(tid[:])
	_, _ = rand.Read(sid[:])
	return trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, Remote: true}))
}
