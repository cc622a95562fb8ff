package httpx_test

import (
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"partnerapi.dev/pkg/httpx"
)

// A server span keeps its request's method once the connection serves the
// next request: fasthttp reuses its buffers, so an attribute that pointed
// into them would read another request's bytes when exported ("PUTT").
func TestServerSpanKeepsItsMethodAcrossRequests(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)))
	app := httpx.New(httpx.Options{Name: "test"}, func(r fiber.Router) {
		r.All("/x", func(c *fiber.Ctx) error { return c.SendStatus(http.StatusNoContent) })
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}} // one kept-alive connection
	methods := []string{"POST", "PUT", "PATCH", "GET", "DELETE", "POST"}
	for _, m := range methods {
		req, _ := http.NewRequest(m, "http://"+ln.Addr().String()+"/x", strings.NewReader(""))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	spans := exp.GetSpans()
	if len(spans) != len(methods) {
		t.Fatalf("%d spans", len(spans))
	}
	for i, s := range spans {
		for _, a := range s.Attributes {
			if a.Key == "http.method" && a.Value.AsString() != methods[i] {
				t.Errorf("span %d: http.method %q, want %q", i, a.Value.AsString(), methods[i])
			}
		}
	}
}
