package outbox_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"

	"partnerapi.dev/pkg/outbox"
)

// An idle relay records nothing; a relay that forwards is one trace named
// for what it does, its statements and the send inside it.
func TestRelayTracesOnlyWork(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)))
	db := openDB(t)
	var sentIn trace.SpanContext
	relay := &outbox.Relay{DB: db.Gorm, Send: func(ctx context.Context, _ []outbox.Recorded) error {
		sentIn = trace.SpanContextFromContext(ctx)
		return nil
	}}
	ctx := context.Background()
	for range 3 {
		if n, err := relay.Flush(ctx); n != 0 || err != nil {
			t.Fatal(n, err)
		}
	}
	if spans := exp.GetSpans(); len(spans) != 0 {
		t.Fatalf("idle polls recorded %d spans, first %q", len(spans), spans[0].Name)
	}

	// Two requests record an event each.
	var writers []trace.SpanContext
	for _, typ := range []string{"a", "b"} {
		reqCtx, req := otel.Tracer("test").Start(ctx, "request")
		if err := db.Gorm.WithContext(reqCtx).Transaction(func(tx *gorm.DB) error {
			return outbox.Record(tx, outbox.Event{Type: typ, RestaurantID: "r1"})
		}); err != nil {
			t.Fatal(err)
		}
		req.End()
		writers = append(writers, req.SpanContext())
	}
	exp.Reset()
	if n, err := relay.Flush(ctx); n != 2 || err != nil {
		t.Fatal(n, err)
	}
	var root *tracetest.SpanStub
	spans := exp.GetSpans()
	for i, s := range spans {
		if !s.Parent.IsValid() {
			if root != nil {
				t.Fatalf("two root spans: %q and %q", root.Name, s.Name)
			}
			root = &spans[i]
		}
	}
	if root == nil || root.Name != "outbox relay" || sentIn.SpanID() != root.SpanContext.SpanID() {
		t.Fatalf("root %+v, send ran in %v", root, sentIn)
	}
	if len(root.Links) != 2 || root.Links[0].SpanContext.SpanID() != writers[0].SpanID() || root.Links[1].SpanContext.SpanID() != writers[1].SpanID() ||
		root.Links[0].SpanContext.TraceID() != writers[0].TraceID() {
		t.Errorf("links %+v, want the two writing requests %v", root.Links, writers)
	}
	names := map[string]bool{}
	for _, s := range spans {
		names[s.Name] = true
		if s.SpanContext.TraceID() != root.SpanContext.TraceID() {
			t.Errorf("span %q is outside the relay's trace", s.Name)
		}
	}
	if !names["SELECT outbox_events"] || !names["DELETE outbox_events"] {
		t.Errorf("spans %v: want the relay's statements", names)
	}
}

// A relay that cannot forward shows its backlog and the age of the oldest
// event in its metrics.
func TestRelayReportsItsBacklog(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	db := openDB(t)
	if err := db.Gorm.Transaction(func(tx *gorm.DB) error {
		return outbox.Record(tx, outbox.Event{Type: "a", RestaurantID: "r1"}, outbox.Event{Type: "b", RestaurantID: "r1"})
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	relay := &outbox.Relay{DB: db.Gorm, MaxBackoff: 50 * time.Millisecond, Send: func(context.Context, []outbox.Recorded) error {
		return errors.New("the events service is down")
	}}
	go func() { defer close(done); _ = relay.Run(ctx) }()
	defer func() { cancel(); <-done }()
	got := map[string]float64{}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && got["outbox.oldest.age"] <= 0; time.Sleep(50 * time.Millisecond) {
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(ctx, &rm); err != nil {
			t.Fatal(err)
		}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				switch d := m.Data.(type) {
				case metricdata.Gauge[int64]:
					got[m.Name] = float64(d.DataPoints[0].Value)
				case metricdata.Gauge[float64]:
					got[m.Name] = d.DataPoints[0].Value
				}
			}
		}
	}
	if got["outbox.backlog"] != 2 || got["outbox.oldest.age"] <= 0 {
		t.Errorf("metrics %v: want a backlog of 2 and a positive age", got)
	}
}
