// Package server assembles the gateway: edge rules, the public OAuth surface
// proxied to identity, and every partner operation of the route table behind
// token, grant, scope, boundary and rate-limit checks.
package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"partnerapi.dev/gateway/internal/access"
	"partnerapi.dev/gateway/internal/apidocs"
	"partnerapi.dev/gateway/internal/auth"
	"partnerapi.dev/gateway/internal/config"
	"partnerapi.dev/gateway/internal/grants"
	"partnerapi.dev/gateway/internal/proxy"
	"partnerapi.dev/gateway/internal/ratelimit"
	"partnerapi.dev/gateway/internal/routes"
	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/contracts/grantchanges"
)

// Header names the gateway sets.
const (
	HeaderRateLimitPolicy = "RateLimit-Policy"
	HeaderRateLimit       = "RateLimit"
	HeaderRetryAfter      = "Retry-After"
)

// HeaderLimit bounds a request's line and headers at the edge: above the
// services' limit so that an oversized access token reaches authentication
// and gets a 401 saying so, not a 431.
const HeaderLimit = 128 << 10

// MaxTokenLength is the longest access token read; identity's are about 1 KB.
const MaxTokenLength = 16 << 10

// Deps are the gateway's connections, made by the caller.
type Deps struct {
	Redis redis.UniversalClient
	// RateLimitPrefix prefixes Redis keys (tests use a unique one).
	RateLimitPrefix string
}

// Gateway is the assembled gateway.
type Gateway struct {
	cfg       config.Config
	ops       []routes.Operation
	keys      *internalctx.Keyring
	verifier  *auth.Verifier
	grants    *grants.Store
	usage     *grants.Usage
	limiter   *ratelimit.Limiter
	partner   ratelimit.Policy
	address   ratelimit.Policy
	identity  *proxy.Upstream
	upstreams map[routes.Service]*proxy.Upstream
	metadata  []byte
	document  []byte // the OpenAPI document of the naming set served
	docsPage  string // the reference page (/docs) of that naming set; empty when not rendered into the build
	ready     []httpx.Check
	now       func() time.Time

	// metadataURL is where RFC 9728 puts the metadata of the resource
	// TOKEN_AUDIENCE; metadataPath is its path, served here.
	metadataURL, metadataPath string
}

// Operations is the route table this gateway serves.
func (g *Gateway) Operations() []routes.Operation { return g.ops }

// Usage is the record of when each grant last authorized a request; the
// caller runs its sends (Usage.Run).
func (g *Gateway) Usage() *grants.Usage { return g.usage }

// FollowGrantChanges drops cached grants as identity's list of grant
// changes names them, every GRANT_CHANGES_INTERVAL, until ctx ends; with
// the interval 0 it returns at once.
func (g *Gateway) FollowGrantChanges(ctx context.Context) {
	if g.cfg.GrantChangesInterval <= 0 {
		return
	}
	f := &grantchanges.Follower{IdentityURL: g.cfg.IdentityURL, Keys: g.keys, Client: g.identity.Client(),
		Interval: g.cfg.GrantChangesInterval, Cache: g.grants}
	f.Run(ctx)
}

// Limiter is the rate limiter (tests inspect fallbacks).
func (g *Gateway) Limiter() *ratelimit.Limiter { return g.limiter }

// New builds the gateway and its Fiber application.
func New(cfg config.Config, deps Deps) (*fiber.App, *Gateway, error) {
	keys, err := internalctx.ParseKeys(cfg.InternalContextKeys.Reveal())
	if err != nil {
		return nil, nil, fmt.Errorf("INTERNAL_CONTEXT_KEYS: %w", err)
	}
	deprecations, err := cfg.Deprecations()
	if err != nil {
		return nil, nil, err
	}
	g := &Gateway{
		cfg:     cfg,
		keys:    keys,
		partner: ratelimit.Policy{Name: "partner", Quota: cfg.RateLimitPerMinute, Window: time.Minute},
		address: ratelimit.Policy{Name: "address", Quota: cfg.UnauthRateLimitPerMinute, Window: time.Minute},
		now:     time.Now,
	}
	prefix := deps.RateLimitPrefix
	if prefix == "" {
		prefix = "gateway:rl:"
	}
	g.limiter = ratelimit.New(deps.Redis, prefix)
	g.identity = proxy.New(string(routes.Identity), cfg.IdentityURL, cfg.UpstreamConnectTimeout, cfg.UpstreamTimeout)
	g.upstreams = map[routes.Service]*proxy.Upstream{routes.Identity: g.identity}
	for svc, base := range upstreamURLs(cfg) {
		if base != "" && svc != routes.Identity {
			g.upstreams[svc] = proxy.New(string(svc), base, cfg.UpstreamConnectTimeout, cfg.UpstreamTimeout+svc.MaxWait())
		}
	}
	g.verifier = auth.NewVerifier(auth.Options{JWKSURL: cfg.IdentityURL + "/oauth2/jwks", Issuer: cfg.TokenIssuer, Audience: cfg.TokenAudience, Client: g.identity.Client()})
	g.grants = grants.NewStore(cfg.IdentityURL, keys, g.identity.Client(), cfg.GrantCacheTTL, cfg.GrantNegativeCacheTTL)
	g.usage = grants.NewUsage(cfg.IdentityURL, keys, g.identity.Client())
	g.ops = routes.Table(routes.NamingSet(cfg.MenuNamingSet))
	g.document = apispec.JSON()
	if routes.NamingSet(cfg.MenuNamingSet) == routes.NamingB {
		g.document = apispec.NamingSetB()
	}
	var rendered bool
	if g.docsPage, rendered = apidocs.Page(routes.NamingSet(cfg.MenuNamingSet)); !rendered {
		slog.Warn("built without the API reference pages (make apidocs renders them): GET /docs answers 404")
	}
	for i := range g.ops {
		if d, ok := deprecations[g.ops[i].ID]; ok {
			g.ops[i].Deprecation = &routes.Deprecation{At: d.Deprecation, Sunset: d.Sunset, Link: d.Link}
		}
	}
	if g.metadataURL, g.metadataPath, err = resourceMetadataLocation(cfg.TokenAudience); err != nil {
		return nil, nil, fmt.Errorf("TOKEN_AUDIENCE: %w", err)
	}
	g.metadata, _ = json.Marshal(map[string]any{
		"resource":                 cfg.TokenAudience,
		"authorization_servers":    []string{cfg.TokenIssuer},
		"scopes_supported":         contracts.ScopeNames(),
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "Restaurant Partner API",
		"resource_documentation":   cfg.PublicBaseURL + "/v1/openapi.json",
	})

	ready := []httpx.Check{{Name: "identity", Fn: g.verifier.Ping}}
	if deps.Redis != nil {
		ready = append(ready, httpx.Check{Name: "redis", Fn: func(ctx context.Context) error { return deps.Redis.Ping(ctx).Err() }})
	}
	g.ready = ready
	app := httpx.New(httpx.Options{
		Name:        "gateway",
		HeaderLimit: HeaderLimit,
		Ready:       ready,
		Before:      []fiber.Handler{g.edge},
	}, g.register)

	// A body over the limit is refused by the HTTP server before any
	// middleware runs; add the policy header to that answer too.
	srv := app.Server()
	answer := srv.ErrorHandler
	policy := g.partner.PolicyHeader()
	srv.ErrorHandler = func(ctx *fasthttp.RequestCtx, err error) {
		answer(ctx, err)
		ctx.Response.Header.Set(HeaderRateLimitPolicy, policy)
	}
	return app, g, nil
}

func (g *Gateway) register(r fiber.Router) {
	// The unsuffixed address predates the resource's own; clients that
	// validate strictly use the one the challenges name.
	r.Get(wellKnownResource, g.protectedResource)
	if g.metadataPath != wellKnownResource {
		r.Get(g.metadataPath, g.protectedResource)
	}
	r.Get("/v1/openapi.json", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(g.document)
	})
	if g.docsPage != "" {
		r.Get("/docs", func(c *fiber.Ctx) error {
			c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
			c.Set(fiber.HeaderContentSecurityPolicy, apidocs.ContentSecurityPolicy)
			return c.SendString(g.docsPage)
		})
	}
	for _, e := range identitySurface {
		r.Add(e.method, e.path, g.oauth)
	}
	for _, op := range g.ops {
		if op.Method == fiber.MethodGet {
			r.Get(op.FiberPath(), g.operation(op)) // GET and HEAD
			continue
		}
		r.Add(op.Method, op.FiberPath(), g.operation(op))
	}
}

// identitySurface is every path of identity's public OAuth surface and of
// its connected-apps pages for owners, exactly: nothing else of identity is
// reachable through the gateway.
var identitySurface = []struct{ method, path string }{
	{fiber.MethodGet, "/.well-known/oauth-authorization-server"},
	{fiber.MethodGet, "/oauth2/jwks"},
	{fiber.MethodGet, "/oauth2/authorize"},
	{fiber.MethodPost, "/oauth2/authorize"},
	{fiber.MethodPost, "/oauth2/token"},
	{fiber.MethodPost, "/oauth2/revoke"},
	{fiber.MethodPost, "/oauth2/introspect"},
	{fiber.MethodGet, "/account"},
	{fiber.MethodPost, "/account/sign-in"},
	{fiber.MethodPost, "/account/sign-out"},
	{fiber.MethodPost, "/account/sign-out-everywhere"},
	{fiber.MethodGet, "/account/authorizations/:grantId"},
	{fiber.MethodPost, "/account/authorizations/:grantId/revoke"},
	{fiber.MethodPost, "/account/authorizations/:grantId/approve-new"},
}

// isPartnerPath tells whether a path is a bearer-protected operation path.
func isPartnerPath(p string) bool { return strings.HasPrefix(p, "/v1/") && p != "/v1/openapi.json" }

// edge runs ahead of every route: the policy header, removal of headers a
// client must not set, and the per-address limit for unauthenticated traffic.
func (g *Gateway) edge(c *fiber.Ctx) error {
	c.Set(HeaderRateLimitPolicy, g.partner.PolicyHeader())
	var spoofed []string
	authorizations := 0
	c.Request().Header.VisitAll(func(k, _ []byte) {
		if proxy.StripBytes(k) {
			spoofed = append(spoofed, string(k))
		}
		if bytes.EqualFold(k, authorizationHeader) {
			authorizations++
		}
	})
	addr := g.clientAddress(c)
	for _, k := range spoofed {
		c.Request().Header.Del(k)
	}
	c.Locals(localsAddress, addr)
	if !isPartnerPath(c.Path()) || c.Get(fiber.HeaderAuthorization) == "" {
		if err := g.countAddress(c); err != nil {
			return err
		}
	}
	if authorizations > 1 {
		// Stacks disagree on which of several credentials counts.
		return httpx.BadRequest("Send one Authorization header.")
	}
	return c.Next()
}

var authorizationHeader = []byte(fiber.HeaderAuthorization)

const localsAddress = "gateway.address"

// clientAddress is the caller's address: the remote peer, or the last entry
// of CLIENT_ADDRESS_HEADER when a trusted ingress sets it.
func (g *Gateway) clientAddress(c *fiber.Ctx) string {
	if h := g.cfg.ClientAddressHeader; h != "" {
		if v := c.Get(h); v != "" {
			parts := strings.Split(v, ",")
			if last := strings.TrimSpace(parts[len(parts)-1]); last != "" {
				return last
			}
		}
	}
	return c.IP()
}

func (g *Gateway) countAddress(c *fiber.Ctx) error {
	addr, _ := c.Locals(localsAddress).(string)
	d := g.limiter.Allow(c.UserContext(), g.address, addr)
	if !d.Allowed {
		// The contract's partner policy stays first; the list also names
		// the policy this answer counted against.
		c.Set(HeaderRateLimitPolicy, g.partner.PolicyHeader()+", "+g.address.PolicyHeader())
		c.Set(HeaderRateLimit, d.Header(g.address))
		return rateLimited(c, d)
	}
	return nil
}

func rateLimited(c *fiber.Ctx, d ratelimit.Decision) error {
	n := d.RetryAfterSeconds()
	c.Set(HeaderRetryAfter, strconv.Itoa(n))
	wait := fmt.Sprintf("%d seconds", n)
	if n == 1 {
		wait = "1 second"
	}
	return &httpx.Error{Status: http.StatusTooManyRequests, Code: httpx.CodeRateLimited,
		Message: "Too many requests. Wait " + wait + ", then retry."}
}

func (g *Gateway) protectedResource(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
	return c.Send(g.metadata)
}

// oauth forwards identity's public OAuth surface and pages unchanged: no
// bearer authentication, only the per-address limit that edge applied.
func (g *Gateway) oauth(c *fiber.Ctx) error {
	if err := g.identity.Forward(c, proxy.Request{Transparent: true}); err != nil {
		slog.WarnContext(c.UserContext(), "identity unreachable for the OAuth surface", "error", err)
		return httpx.Unavailable(false)
	}
	return nil
}

func (g *Gateway) resourceMetadataURL() string { return g.metadataURL }

const wellKnownResource = "/.well-known/oauth-protected-resource"

// resourceMetadataLocation is the metadata address of a resource under RFC
// 9728 section 3.1: the well-known path between the host and the resource's
// own path (https://host/v1 has https://host/.well-known/oauth-protected-resource/v1).
// A client checks that the document's resource is the one the address was
// built from, so the document may only be served there.
func resourceMetadataLocation(resource string) (string, string, error) {
	u, err := url.Parse(resource)
	if err != nil || u.Scheme == "" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("%q is not an absolute URL without query or fragment", resource)
	}
	path := wellKnownResource + strings.TrimRight(u.EscapedPath(), "/")
	return u.Scheme + "://" + u.Host + path, path, nil
}

// invalidToken is the 401 with the bearer challenge.
func (g *Gateway) invalidToken(description string) *httpx.Error {
	challenge := fmt.Sprintf(`Bearer error="invalid_token", error_description=%q, resource_metadata=%q`, description, g.resourceMetadataURL())
	return &httpx.Error{Status: http.StatusUnauthorized, Code: httpx.CodeInvalidToken, Description: description,
		Header: map[string]string{fiber.HeaderWWWAuthenticate: challenge}}
}

func (g *Gateway) noToken() *httpx.Error {
	return &httpx.Error{Status: http.StatusUnauthorized, Code: httpx.CodeInvalidToken,
		Description: "Send an access token in the Authorization header, as Bearer followed by the token.",
		Header:      map[string]string{fiber.HeaderWWWAuthenticate: fmt.Sprintf(`Bearer resource_metadata=%q`, g.resourceMetadataURL())}}
}

// insufficientScope is the 403 with the bearer challenge naming every scope
// the operation needs.
func (g *Gateway) insufficientScope(needed []string, description string) *httpx.Error {
	challenge := fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, error_description=%q, resource_metadata=%q`,
		strings.Join(needed, " "), description, g.resourceMetadataURL())
	return &httpx.Error{Status: http.StatusForbidden, Code: httpx.CodeInsufficientScope, Description: description,
		Header: map[string]string{fiber.HeaderWWWAuthenticate: challenge}}
}

func (g *Gateway) authenticate(c *fiber.Ctx) (*auth.Token, error) {
	h := c.Get(fiber.HeaderAuthorization)
	if h == "" {
		return nil, g.noToken()
	}
	scheme, raw, ok := strings.Cut(h, " ")
	raw = strings.TrimSpace(raw)
	if !ok || !strings.EqualFold(scheme, "Bearer") || raw == "" {
		if err := g.countAddress(c); err != nil {
			return nil, err
		}
		return nil, g.invalidToken("The Authorization header must be Bearer followed by the access token.")
	}
	if len(raw) > MaxTokenLength {
		if err := g.countAddress(c); err != nil {
			return nil, err
		}
		return nil, g.invalidToken(fmt.Sprintf("The access token is longer than %d bytes.", MaxTokenLength))
	}
	tok, err := g.verifier.Verify(c.UserContext(), raw)
	if err != nil {
		if errors.Is(err, auth.ErrKeysUnavailable) {
			slog.WarnContext(c.UserContext(), "cannot verify tokens: JWKS unavailable")
			return nil, httpx.Unavailable(false)
		}
		if err := g.countAddress(c); err != nil {
			return nil, err
		}
		var ae *auth.Error
		if errors.As(err, &ae) {
			return nil, g.invalidToken(ae.Description)
		}
		return nil, g.invalidToken("The access token is invalid.")
	}
	return tok, nil
}

func setDeprecation(c *fiber.Ctx, d *routes.Deprecation) {
	c.Set("Deprecation", "@"+strconv.FormatInt(d.At.Unix(), 10))
	c.Set("Sunset", d.Sunset.UTC().Format(http.TimeFormat))
	c.Response().Header.Add("Link", fmt.Sprintf("<%s>; rel=\"deprecation\"", d.Link))
}

// operation is the handler of one partner operation. It reads in the order
// the answers are given: authenticate the token, start the partner's
// rate-limit count, authorize (grant, scopes, boundary), find the service,
// admit by the count, forward.
//
// The count's Redis round trip overlaps the grant lookup; and for a read whose
// partner has room in its quota (ratelimit.Count.Deferred) it is decided only
// once the request is written to the service, so it overlaps the service's
// work too, and the answer is the one it would be had the count come first.
func (g *Gateway) operation(op routes.Operation) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if op.Deprecation != nil {
			setDeprecation(c, op.Deprecation)
		}
		if ce := c.Get(fiber.HeaderContentEncoding); ce != "" && !strings.EqualFold(ce, "identity") {
			// A compressed body could inflate far past the 1 MiB cap.
			return &httpx.Error{Status: http.StatusUnsupportedMediaType, Code: httpx.CodeUnsupportedMediaType, Message: "Send the request body uncompressed (no Content-Encoding)."}
		}
		tok, err := g.authenticate(c)
		if err != nil {
			return err
		}
		httpx.SetClientID(c, tok.ClientID)
		trace.SpanFromContext(c.UserContext()).SetAttributes(
			attribute.String("partner.operation", op.ID),
			attribute.String("partner.client_id", tok.ClientID),
			attribute.String("partner.grant_id", tok.GrantID))

		count := g.limiter.Count(c.UserContext(), g.partner, tok.ClientID+"\x00"+tok.Subject, !op.Write)
		defer count.Decide() // counted even if the request ends on a path not foreseen here
		admit := func() error {
			d := count.Decide()
			c.Set(HeaderRateLimit, d.Header(g.partner))
			if !d.Allowed {
				return rateLimited(c, d)
			}
			return nil
		}

		ic, err := g.authorize(c, op, tok)
		var up *proxy.Upstream
		if err == nil {
			up, err = g.upstream(op)
		}
		if err != nil {
			// A refused request counts too, and a 429 takes precedence.
			if refused := admit(); refused != nil {
				return refused
			}
			return err
		}

		// Every partner write carries an idempotency key (a preview and a
		// plan write nothing), so a write meeting a kept-alive connection
		// the service closed while draining is sent again, not failed.
		forward := proxy.Request{InternalContext: g.keys.Sign(ic), Admit: admit, Resendable: true}
		if count.Deferred() {
			forward.Sent = func() { count.Decide() }
		} else {
			if err := admit(); err != nil {
				return err
			}
			forward.Admit = nil
		}
		err = up.Forward(c, forward)
		if errors.Is(err, proxy.ErrUnreachable) {
			slog.WarnContext(c.UserContext(), "upstream unreachable", "service", op.Service, "operation", op.ID, "error", err)
			return httpx.Unavailable(op.Write)
		}
		return err
	}
}

// authorize looks up the owner's grant behind a verified token and applies
// the access rules (package access) to the request.
func (g *Gateway) authorize(c *fiber.Ctx, op routes.Operation, tok *auth.Token) (internalctx.Context, error) {
	rid := httpx.RequestID(c)
	grant, err := g.grants.Get(c.UserContext(), grants.Caller{ClientID: tok.ClientID, UserID: tok.Subject, GrantID: tok.GrantID, RequestID: rid})
	switch {
	case errors.Is(err, grants.ErrNotFound):
		return internalctx.Context{}, g.insufficientScope(access.NeededScopes(op, nil), access.DescriptionRevoked)
	case err != nil:
		slog.WarnContext(c.UserContext(), "grant lookup failed", "error", err)
		return internalctx.Context{}, httpx.Unavailable(op.Write)
	}
	var orgIDs []string
	for _, v := range c.Context().QueryArgs().PeekMulti("organization_id") {
		orgIDs = append(orgIDs, string(v))
	}
	ic, err := access.Decide(access.Request{Operation: op, Token: tok, Grant: grant, Now: g.now(), Param: func(name string) string { return c.Params(name) }, OrganizationIDs: orgIDs})
	var refusal *access.Refusal
	if errors.As(err, &refusal) {
		return ic, g.refuse(refusal)
	}
	if err == nil {
		g.usage.Record(grant.GrantID, g.now())
	}
	ic.RequestID = rid
	return ic, err
}

// refuse answers an access refusal.
func (g *Gateway) refuse(r *access.Refusal) error {
	switch r.Kind {
	case access.InvalidToken:
		return g.invalidToken(r.Description)
	case access.InsufficientScope:
		return g.insufficientScope(r.Scopes, r.Description)
	case access.Invalid:
		return httpx.BadRequest("%s", r.Description)
	}
	return httpx.NotFound()
}

// upstreamURLs are the base URLs of the services the gateway forwards to, by
// the routes.Service owning the operations; empty: not deployed (its
// operations answer 503). tools/registry/processes.json declares the same
// pairs of service and variable, and a test holds them together.
func upstreamURLs(cfg config.Config) map[routes.Service]string {
	return map[routes.Service]string{
		routes.Identity:      cfg.IdentityURL,
		routes.Orders:        cfg.OrdersURL,
		routes.Accounting:    cfg.AccountingURL,
		routes.Menus:         cfg.MenusURL,
		routes.CatalogImport: cfg.CatalogImportURL,
		routes.Events:        cfg.EventsURL,
	}
}

// upstream is the service that owns op, or the 503 of an operation whose
// service this deployment does not run.
func (g *Gateway) upstream(op routes.Operation) (*proxy.Upstream, error) {
	if up := g.upstreams[op.Service]; up != nil {
		return up, nil
	}
	if op.Write {
		return nil, &httpx.Error{Status: http.StatusServiceUnavailable, Code: httpx.CodeCapabilityDisabled, Message: "This capability is disabled in this environment. No change was made."}
	}
	return nil, &httpx.Error{Status: http.StatusServiceUnavailable, Code: httpx.CodeServiceUnavailable, Message: "This operation is not available in this environment."}
}
