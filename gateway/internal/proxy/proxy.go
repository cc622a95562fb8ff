// Package proxy forwards a partner request to the service that owns it: one
// pooled HTTP client per upstream, bounded connect and response timeouts, no
// retries of writes, W3C trace context and the request id carried along.
package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/internalctx"
)

// MaxResponseBytes bounds an upstream answer.
const MaxResponseBytes = 32 << 20

// ErrUnreachable means the upstream could not be reached or did not answer
// in time.
var ErrUnreachable = errors.New("upstream unreachable")

// Upstream is one service's base URL and connection pool.
type Upstream struct {
	Name   string
	base   string
	client *http.Client
}

// New returns an upstream for base (scheme://host[:port], no trailing slash).
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
	return &Upstream{Name: name, base: base, client: &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
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
func Strip(name string) bool {
	n := http.CanonicalHeaderKey(name)
	return n == internalctx.Header || n == "Forwarded" || strings.HasPrefix(n, "X-Forwarded-") || n == "X-Real-Ip"
}

// Forward sends the request in c to the upstream and writes its answer to c.
// It returns ErrUnreachable (wrapped) when no answer came.
func (u *Upstream) Forward(c *fiber.Ctx, r Request) error {
	ctx, span := otel.Tracer("partnerapi.dev/gateway/proxy").Start(c.UserContext(), "proxy "+u.Name,
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("http.request.method", c.Method()), attribute.String("peer.service", u.Name)))
	defer span.End()

	var body io.Reader = http.NoBody
	// The raw body as received: Ctx.Body would inflate a compressed body,
	// which the 1 MiB cap could not bound.
	if b := c.Request().Body(); len(b) > 0 {
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, c.Method(), u.base+c.OriginalURL(), body)
	if err != nil {
		return fmt.Errorf("build upstream request: %w", err)
	}
	if r.Transparent {
		c.Request().Header.VisitAll(func(k, v []byte) {
			name := string(k)
			cn := http.CanonicalHeaderKey(name)
			if hopByHop[cn] || Strip(cn) || cn == "Accept-Encoding" {
				return
			}
			req.Header.Add(cn, string(v))
		})
		req.Header.Set("X-Forwarded-For", c.IP())
		req.Header.Set("X-Forwarded-Proto", c.Protocol())
		req.Header.Set("X-Forwarded-Host", c.Hostname())
	} else {
		for _, h := range partnerRequestHeaders {
			if v := c.Get(h); v != "" {
				req.Header.Set(h, v)
			}
		}
	}
	if r.InternalContext != "" {
		req.Header.Set(internalctx.Header, r.InternalContext)
	}
	req.Header.Set(httpx.HeaderRequestID, httpx.RequestID(c))
	otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(req.Header))

	resp, err := u.client.Do(req)
	if err != nil {
		span.SetStatus(codes.Error, "upstream unreachable")
		span.RecordError(err)
		return fmt.Errorf("%w: %s: %w", ErrUnreachable, u.Name, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err == nil && len(data) > MaxResponseBytes {
		err = fmt.Errorf("answer larger than %d bytes", MaxResponseBytes)
	}
	if err != nil {
		// Nothing was written to the client yet, so it gets a clean 503
		// rather than a truncated answer.
		span.SetStatus(codes.Error, "upstream read failed")
		return fmt.Errorf("%w: %s: read body: %w", ErrUnreachable, u.Name, err)
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	for k, vs := range resp.Header {
		if hopByHop[k] || gatewayOwned[k] || (!r.Transparent && k == "Set-Cookie") {
			continue
		}
		for _, v := range vs {
			c.Response().Header.Add(k, v)
		}
	}
	c.Status(resp.StatusCode)
	return c.Send(data)
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
