package httpx

import (
	"context"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.12.0"
	"go.opentelemetry.io/otel/trace"
)

// serverTelemetry is every application's server span, HTTP metrics and
// access line (accessLog): the same span (name, kind, attributes, status,
// traceparent in the answer) and the same four instruments as otelfiber, at
// a fraction of its cost per request: request attributes are built only for
// a span that records, the W3C headers are read straight from fasthttp (no
// net/http header map), and the metric attribute sets are built once per
// method, host, route and status and then reused.
func serverTelemetry() fiber.Handler {
	const scope = "github.com/gofiber/contrib/otelfiber"
	tracer := otel.GetTracerProvider().Tracer(scope)
	meter := otel.GetMeterProvider().Meter(scope)
	duration, err := meter.Float64Histogram("http.server.duration", metric.WithUnit("ms"), metric.WithDescription("measures the duration inbound HTTP requests"))
	if err != nil {
		otel.Handle(err)
	}
	reqSize, err := meter.Int64Histogram("http.server.request.size", metric.WithUnit("By"), metric.WithDescription("measures the size of HTTP request messages"))
	if err != nil {
		otel.Handle(err)
	}
	respSize, err := meter.Int64Histogram("http.server.response.size", metric.WithUnit("By"), metric.WithDescription("measures the size of HTTP response messages"))
	if err != nil {
		otel.Handle(err)
	}
	active, err := meter.Int64UpDownCounter("http.server.active_requests", metric.WithUnit("1"), metric.WithDescription("measures the number of concurrent HTTP requests that are currently in-flight"))
	if err != nil {
		otel.Handle(err)
	}
	sets := &attrCache{entries: map[attrKey]*attrOpts{}}
	startOpts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}
	return func(c *fiber.Ctx) error {
		start := time.Now()
		saved, cancel := context.WithCancel(c.UserContext())
		defer cancel()
		key := attrKey{http11: c.Request().Header.IsHTTP11(), method: c.Method(), scheme: c.Protocol(), host: c.Hostname(), status: -1}
		reqAttrs := sets.get(key)
		active.Add(saved, 1, reqAttrs.add...)

		prop := otel.GetTextMapPropagator()
		ctx := prop.Extract(saved, requestCarrier{&c.Request().Header})
		// Named by the path until the route is known, as otelfiber does.
		ctx, span := tracer.Start(ctx, string([]byte(c.Path())), startOpts...)
		recording := span.IsRecording()
		if recording {
			span.SetAttributes(requestAttributes(c)...)
		}
		c.SetUserContext(ctx)
		err := c.Next()
		if err != nil {
			// The error handler writes the answer now, so its status is known.
			_ = c.App().Config().ErrorHandler(c, err)
		}
		status := c.Response().StatusCode()
		route := c.Route().Path
		if err != nil && recording && status >= 500 {
			// Only a server fault: a refusal's message may quote the input.
			span.RecordError(err)
		}
		accessLog(ctx, c, route, status, time.Since(start))
		requestSize, responseSize := int64(len(c.Request().Body())), int64(len(c.Response().Body()))
		if recording {
			span.SetAttributes(semconv.HTTPStatusCodeKey.Int(status), semconv.HTTPRouteKey.String(route),
				semconv.HTTPResponseContentLengthKey.Int64(responseSize))
			span.SetName(route)
			code, msg := semconv.SpanStatusFromHTTPStatusCodeAndSpanKind(status, trace.SpanKindServer)
			span.SetStatus(code, msg)
		}
		prop.Inject(ctx, responseCarrier{&c.Response().Header})
		span.End()

		key.route, key.status = route, status
		respAttrs := sets.get(key)
		active.Add(saved, -1, reqAttrs.add...)
		duration.Record(saved, float64(time.Since(start).Microseconds())/1000, respAttrs.rec...)
		reqSize.Record(saved, requestSize, respAttrs.rec...)
		respSize.Record(saved, responseSize, respAttrs.rec...)
		c.SetUserContext(saved)
		return nil
	}
}

// requestAttributes are otelfiber's span attributes of a request (copied:
// fasthttp reuses its buffers once the request is answered).
func requestAttributes(c *fiber.Ctx) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		flavor(c.Request().Header.IsHTTP11()),
		semconv.HTTPMethodKey.String(string([]byte(c.Method()))),
		semconv.HTTPRequestContentLengthKey.Int(c.Request().Header.ContentLength()),
		semconv.HTTPSchemeKey.String(c.Protocol()),
		// The path only: a query string may carry what a partner searched for.
		semconv.HTTPTargetKey.String(string([]byte(c.Path()))),
		semconv.HTTPUserAgentKey.String(string(c.Request().Header.UserAgent())),
		semconv.NetHostNameKey.String(string([]byte(c.Hostname()))),
		semconv.NetTransportTCP,
	}
	if ip := c.IP(); ip != "" {
		attrs = append(attrs, semconv.HTTPClientIPKey.String(string([]byte(ip))))
	}
	return attrs
}

func flavor(http11 bool) attribute.KeyValue {
	if http11 {
		return semconv.HTTPFlavorHTTP11
	}
	return semconv.HTTPFlavorHTTP10
}

// attrKey identifies one metric attribute set; status -1 is the request set
// (no status, no route).
type attrKey struct {
	http11                      bool
	method, scheme, host, route string
	status                      int
}

// maxAttrSets bounds the cache; a Host header is chosen by the client.
const maxAttrSets = 4096

type attrCache struct {
	mu      sync.RWMutex
	entries map[attrKey]*attrOpts
}

// attrOpts are one attribute set as ready-made option lists (a variadic
// call with a fresh list would allocate it each time).
type attrOpts struct {
	add []metric.AddOption
	rec []metric.RecordOption
}

func (a *attrCache) get(k attrKey) *attrOpts {
	a.mu.RLock()
	opt, ok := a.entries[k]
	a.mu.RUnlock()
	if ok {
		return opt
	}
	// Copies: host may point into a fasthttp buffer.
	k.method, k.scheme, k.host, k.route = string([]byte(k.method)), string([]byte(k.scheme)), string([]byte(k.host)), string([]byte(k.route))
	attrs := []attribute.KeyValue{flavor(k.http11), semconv.HTTPMethodKey.String(k.method), semconv.HTTPSchemeKey.String(k.scheme), semconv.NetHostNameKey.String(k.host)}
	if k.status >= 0 {
		attrs = append(attrs, semconv.HTTPStatusCodeKey.Int(k.status), semconv.HTTPRouteKey.String(k.route))
	}
	set := metric.WithAttributeSet(attribute.NewSet(attrs...))
	opt = &attrOpts{add: []metric.AddOption{set}, rec: []metric.RecordOption{set}}
	a.mu.Lock()
	if len(a.entries) < maxAttrSets {
		a.entries[k] = opt
	}
	a.mu.Unlock()
	return opt
}

// requestCarrier reads W3C trace context from a fasthttp request.
type requestCarrier struct{ h *fasthttp.RequestHeader }

func (r requestCarrier) Get(k string) string { return string(r.h.Peek(k)) }
func (r requestCarrier) Set(k, v string)     { r.h.Set(k, v) }
func (r requestCarrier) Keys() []string {
	var keys []string
	r.h.VisitAll(func(k, _ []byte) { keys = append(keys, string(k)) })
	return keys
}

// responseCarrier writes trace context into the answer.
type responseCarrier struct{ h *fasthttp.ResponseHeader }

func (r responseCarrier) Get(k string) string { return string(r.h.Peek(k)) }
func (r responseCarrier) Set(k, v string)     { r.h.Set(k, v) }
func (r responseCarrier) Keys() []string {
	var keys []string
	r.h.VisitAll(func(k, _ []byte) { keys = append(keys, string(k)) })
	return keys
}
