package delivery_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/events/internal/delivery"
)

// The delivery metrics name the endpoint: its waiting deliveries before a
// send, and each attempt's outcome after.
func TestDeliveryMetricsPerEndpoint(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	e := newEnv(t)
	if err := delivery.ObserveBacklog(e.store.Backlog); err != nil {
		t.Fatal(err)
	}
	rcv := newReceiver(t)
	id := e.endpoint(rcv.srv.URL+"/orders", contracts.EventOrderCreated).ID
	e.appendEvents(ev(restA, contracts.EventOrderCreated), ev(restA, contracts.EventOrderCreated))
	points := func(name string) map[string]float64 {
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name != name {
					continue
				}
				switch d := m.Data.(type) {
				case metricdata.Gauge[int64]:
					for _, p := range d.DataPoints {
						ep, _ := p.Attributes.Value("endpoint")
						out[ep.AsString()] = float64(p.Value)
					}
				case metricdata.Sum[int64]:
					for _, p := range d.DataPoints {
						ep, _ := p.Attributes.Value("endpoint")
						o, _ := p.Attributes.Value("outcome")
						out[ep.AsString()+" "+o.AsString()] = float64(p.Value)
					}
				}
			}
		}
		return out
	}
	if got := points("webhook.deliveries.waiting"); got[id] != 2 {
		t.Fatalf("waiting before the send: %v", got)
	}
	if n := e.run(); n != 2 {
		t.Fatalf("sent %d", n)
	}
	if got := points("webhook.delivery.attempts"); got[id+" succeeded"] != 2 {
		t.Fatalf("attempts: %v", got)
	}
	if got := points("webhook.deliveries.waiting"); got[id] != 0 {
		t.Fatalf("waiting after the send: %v", got)
	}
}
