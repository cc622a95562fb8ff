// Package proxy forwards a partner request to the service that owns it: one
// pooled HTTP client per upstream, bounded connect and response timeouts, no
// retries of writes, W3C trace context and the request id carried along.
package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/internalctx"
)

// MaxResponseBytes bounds an upstream answer.
const MaxResponseBytes = 32 << 20

// ErrUnreachable means the upstream could not be reached or did not answer
// in time.
var ErrUnreachable = errors.New("upstream unreachable")

// Upstream is one service's base URL and connection pools.
//
// A proxied request is copied header by header from the gateway's fasthttp
// request into a fasthttp request written on a pooled keep-alive connection
// (conn.go), in the calling goroutine, with no net/http conversion. The
// net/http client remains for the gateway's own calls (JWKS, grants) and
// Ping.
type Upstream struct {
	Name   string
	base   string
	prefix string // scheme://host[:port] of base, prepended to the original URI
	conns  *conns
	client *http.Client
	// tracer comes from the provider installed when the upstream was made
	// (a package-level one would stay bound to the first provider ever set).
	tracer trace.Tracer
}

// New returns an upstream for base (scheme://host[:port], no trailing
// slash); timeout bounds one forwarded request (connect, write, answer).
func New(name, base string, connectTimeout, timeout time.Duration) *Upstream {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          512,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   connectTimeout,
		ResponseHeaderTimeout: timeout,
		ExpectContinueTimeout: time.Second,
	}
	addr, host, useTLS := hostAddr(base)
	u := &Upstream{Name: name, base: base, prefix: base, tracer: otel.Tracer("partnerapi.dev/gateway/proxy"), client: &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	u.conns = &conns{addr: addr, connectTimeout: connectTimeout, timeout: timeout}
	if useTLS {
		u.conns.tls = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	}
	return u
}

// hostAddr is base's host:port (default port by scheme), its host name, and
// whether it uses TLS.
func hostAddr(base string) (addr, host string, useTLS bool) {
	pu, err := url.Parse(base)
	if err != nil || pu.Host == "" {
		return base, base, false
	}
	useTLS = pu.Scheme == "https"
	port := pu.Port()
	if port == "" {
		port = "80"
		if useTLS {
			port = "443"
		}
	}
	return net.JoinHostPort(pu.Hostname(), port), pu.Hostname(), useTLS
}

func isRead(m []byte) bool {
	return string(m) == fasthttp.MethodGet || string(m) == fasthttp.MethodHead || string(m) == fasthttp.MethodOptions
}

// Client is the upstream's pooled client (the grant store reuses identity's).
func (u *Upstream) Client() *http.Client { return u.client }

// Request says how to forward one request.
type Request struct {
	// InternalContext is the signed X-Internal-Context value ("" for the
	// public OAuth surface).
	InternalContext string
	// Transparent forwards nearly every request header (cookies, basic
	// auth) and every response header (Set-Cookie), for OAuth pages.
	Transparent bool
	// Sent, when set, runs once the request is written to the upstream,
	// before its answer is awaited (a deferred rate-limit count goes to
	// Redis then, while the service works).
	Sent func()
	// Admit, when set, runs once the upstream answered or failed and
	// before anything is written to the client; its error is returned
	// instead and the upstream's answer dropped (a rate-limit decision
	// made after the request was sent).
	Admit func() error
	// Resendable: the upstream may receive the request twice, so a write
	// whose kept-alive connection turns out closed before anything was
	// answered is sent once more on a new connection, as a read is. True
	// for a write that carries an idempotency key the service answers
	// once, or that writes nothing (a preview, a plan).
	Resendable bool
}

var hopByHop = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true, "Proxy-Authorization": true,
	"Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true, "Content-Length": true, "Host": true,
}

// gatewayOwned response headers are set by the gateway and never taken from
// an upstream.
var gatewayOwned = map[string]bool{
	"X-Request-Id": true, "Ratelimit-Policy": true, "Ratelimit": true, "Retry-After": true,
	"Deprecation": true, "Sunset": true, "Server": true, "Date": true,
}

// partnerRequestHeaders are the only inbound headers a partner operation forwards.
var partnerRequestHeaders = []string{"Content-Type", "Accept", "Accept-Language", "User-Agent", "If-None-Match", "If-Match"}

// Strip reports whether an inbound header must never reach a service: the
// internal context and forwarding headers a client could spoof.
func Strip(name string) bool { return StripBytes([]byte(name)) }

// StripBytes is Strip for a header name as fasthttp hands it over; it does
// not allocate.
func StripBytes(name []byte) bool {
	return asciiEqualFold(name, internalctx.Header) || asciiEqualFold(name, "Forwarded") ||
		len(name) >= len("X-Forwarded-") && asciiEqualFold(name[:len("X-Forwarded-")], "X-Forwarded-") ||
		asciiEqualFold(name, "X-Real-Ip")
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// headerCarrier lets the OpenTelemetry propagator write W3C trace context
// into a fasthttp request.
type headerCarrier struct{ h *fasthttp.RequestHeader }

func (c headerCarrier) Get(k string) string { return string(c.h.Peek(k)) }
func (c headerCarrier) Set(k, v string)     { c.h.Set(k, v) }
func (c headerCarrier) Keys() []string {
	var keys []string
	c.h.VisitAll(func(k, _ []byte) { keys = append(keys, string(k)) })
	return keys
}

// Forward sends the request in c to the upstream and writes its answer to c.
// It returns ErrUnreachable (wrapped) when no answer came.
func (u *Upstream) Forward(c *fiber.Ctx, r Request) error {
	ctx, span := u.tracer.Start(c.UserContext(), "proxy "+u.Name,
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("http.request.method", string([]byte(c.Method()))), attribute.String("peer.service", u.Name)))
	defer span.End()

	in := &c.Request().Header
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.DisableNormalizing()
	req.Header.SetMethodBytes(in.Method())
	req.URI().DisablePathNormalizing = true
	// The path the routes matched and the query, never the raw request
	// target: an absolute-form target would carry its own host.
	uri := u.prefix + c.Path()
	if q := c.Request().URI().QueryString(); len(q) > 0 {
		uri += "?" + string(q)
	}
	req.SetRequestURI(uri)
	// The raw body as received: Ctx.Body would inflate a compressed body,
	// which the 1 MiB cap could not bound.
	if b := c.Request().Body(); len(b) > 0 {
		req.SetBodyRaw(b)
	}
	if r.Transparent {
		in.VisitAll(func(k, v []byte) {
			cn := http.CanonicalHeaderKey(string(k))
			if hopByHop[cn] || StripBytes(k) || cn == "Accept-Encoding" {
				return
			}
			req.Header.Add(cn, string(v))
		})
		req.Header.Set("X-Forwarded-For", c.IP())
		req.Header.Set("X-Forwarded-Proto", c.Protocol())
		req.Header.Set("X-Forwarded-Host", c.Hostname())
	} else {
		for _, h := range partnerRequestHeaders {
			if v := in.Peek(h); len(v) > 0 {
				req.Header.SetBytesV(h, v)
			}
		}
	}
	if r.InternalContext != "" {
		req.Header.Set(internalctx.Header, r.InternalContext)
	}
	req.Header.Set(httpx.HeaderRequestID, httpx.RequestID(c))
	otel.GetTextMapPropagator().Inject(ctx, headerCarrier{&req.Header})

	err := u.conns.exchange(req, resp, isRead(in.Method()) || r.Resendable, r.Sent)
	if r.Admit != nil {
		if refused := r.Admit(); refused != nil {
			span.SetAttributes(attribute.Bool("partner.answer_dropped", true))
			return refused
		}
	}
	if err != nil {
		// Nothing was written to the client yet, so it gets a clean 503
		// rather than a truncated answer.
		span.SetStatus(codes.Error, "upstream unreachable")
		span.RecordError(err)
		return fmt.Errorf("%w: %s: %w", ErrUnreachable, u.Name, err)
	}
	status := resp.StatusCode()
	span.SetAttributes(attribute.Int("http.response.status_code", status))
	out := &c.Response().Header
	resp.Header.VisitAll(func(k, v []byte) {
		if isHopByHop(k) || isGatewayOwned(k) || (!r.Transparent && asciiEqualFold(k, "Set-Cookie")) {
			return
		}
		out.AddBytesKV(k, v)
	})
	c.Status(status)
	c.Response().SetBody(resp.Body())
	return nil
}

var hopByHopNames, gatewayOwnedNames = keys(hopByHop), keys(gatewayOwned)

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func isHopByHop(k []byte) bool {
	for _, name := range hopByHopNames {
		if asciiEqualFold(k, name) {
			return true
		}
	}
	return false
}

func isGatewayOwned(k []byte) bool {
	for _, name := range gatewayOwnedNames {
		if asciiEqualFold(k, name) {
			return true
		}
	}
	return false
}

// Ping checks that the upstream answers GET path with 2xx.
func (u *Upstream) Ping(ctx context.Context, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.base+path, nil)
	if err != nil {
		return err
	}
	resp, err := u.client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s answered %d", u.Name, resp.StatusCode)
	}
	return nil
}
