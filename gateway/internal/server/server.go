// Package server assembles the gateway: edge rules, the public OAuth surface
// proxied to identity, and every partner operation of the route table behind
// token, grant, scope, boundary and rate-limit checks.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"partnerapi.dev/gateway/internal/auth"
	"partnerapi.dev/gateway/internal/config"
	"partnerapi.dev/gateway/internal/grants"
	"partnerapi.dev/gateway/internal/proxy"
	"partnerapi.dev/gateway/internal/ratelimit"
	"partnerapi.dev/gateway/internal/routes"
	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/internalctx"
)

// Header names the gateway sets.
const (
	HeaderRateLimitPolicy = "RateLimit-Policy"
	HeaderRateLimit       = "RateLimit"
	HeaderRetryAfter      = "Retry-After"
)

// Deps are the gateway's connections, made by the caller.
type Deps struct {
	Redis *redis.Client
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
	limiter   *ratelimit.Limiter
	partner   ratelimit.Policy
	address   ratelimit.Policy
	identity  *proxy.Upstream
	upstreams map[routes.Service]*proxy.Upstream
	metadata  []byte
	ready     []httpx.Check
	now       func() time.Time
}

// Operations is the route table this gateway serves.
func (g *Gateway) Operations() []routes.Operation { return g.ops }

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
	for svc, base := range map[routes.Service]string{routes.Orders: cfg.OrdersURL, routes.Accounting: cfg.AccountingURL, routes.Menus: cfg.MenusURL, routes.CatalogImport: cfg.CatalogImportURL} {
		if base != "" {
			g.upstreams[svc] = proxy.New(string(svc), base, cfg.UpstreamConnectTimeout, cfg.UpstreamTimeout)
		}
	}
	g.verifier = auth.NewVerifier(auth.Options{JWKSURL: cfg.IdentityURL + "/oauth2/jwks", Issuer: cfg.TokenIssuer, Audience: cfg.TokenAudience, Client: g.identity.Client()})
	g.grants = grants.NewStore(cfg.IdentityURL, keys, g.identity.Client(), cfg.GrantCacheTTL, cfg.GrantNegativeCacheTTL)
	g.ops = routes.Table(routes.NamingSet(cfg.MenuNamingSet))
	for i := range g.ops {
		if d, ok := deprecations[g.ops[i].ID]; ok {
			g.ops[i].Deprecation = &routes.Deprecation{At: d.Deprecation, Sunset: d.Sunset, Link: d.Link}
		}
	}
	g.metadata, _ = json.Marshal(map[string]any{
		"resource":                 cfg.TokenAudience,
		"authorization_servers":    []string{cfg.TokenIssuer},
		"scopes_supported":         routes.AllScopes,
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
		Name:   "gateway",
		Ready:  ready,
		Before: []fiber.Handler{g.edge},
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
	r.Get("/.well-known/oauth-protected-resource", g.protectedResource)
	r.Get("/.well-known/oauth-protected-resource/v1", g.protectedResource)
	r.Get("/v1/openapi.json", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(apispec.JSON())
	})
	r.Get("/.well-known/oauth-authorization-server", g.oauth)
	r.All("/oauth2/*", g.oauth)
	for _, op := range g.ops {
		if op.Method == fiber.MethodGet {
			r.Get(op.FiberPath(), g.operation(op)) // GET and HEAD
			continue
		}
		r.Add(op.Method, op.FiberPath(), g.operation(op))
	}
}

// isPartnerPath tells whether a path is a bearer-protected operation path.
func isPartnerPath(p string) bool { return strings.HasPrefix(p, "/v1/") && p != "/v1/openapi.json" }

// edge runs ahead of every route: the policy header, removal of headers a
// client must not set, and the per-address limit for unauthenticated traffic.
func (g *Gateway) edge(c *fiber.Ctx) error {
	c.Set(HeaderRateLimitPolicy, g.partner.PolicyHeader())
	var spoofed []string
	c.Request().Header.VisitAll(func(k, _ []byte) {
		if proxy.StripBytes(k) {
			spoofed = append(spoofed, string(k))
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
	return c.Next()
}

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
		c.Set(HeaderRateLimit, d.Header(g.address))
		return rateLimited(c, d)
	}
	return nil
}

func rateLimited(c *fiber.Ctx, d ratelimit.Decision) error {
	c.Set(HeaderRetryAfter, strconv.Itoa(d.RetryAfterSeconds()))
	return &httpx.Error{Status: http.StatusTooManyRequests, Code: httpx.CodeRateLimited,
		Message: fmt.Sprintf("Too many requests. Wait %d seconds, then retry.", d.RetryAfterSeconds())}
}

func (g *Gateway) protectedResource(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
	return c.Send(g.metadata)
}

// oauth forwards identity's public OAuth surface unchanged: no bearer
// authentication, only the per-address limit that edge applied.
func (g *Gateway) oauth(c *fiber.Ctx) error {
	if err := g.identity.Forward(c, proxy.Request{Transparent: true}); err != nil {
		slog.Warn("identity unreachable for the OAuth surface", "error", err, "request_id", httpx.RequestID(c))
		return httpx.Unavailable(false)
	}
	return nil
}

func (g *Gateway) resourceMetadataURL() string {
	return g.cfg.PublicBaseURL + "/.well-known/oauth-protected-resource"
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

// DescriptionRevoked is the 403 description for a grant that no longer holds.
const DescriptionRevoked = "The authorization expired or was revoked. Ask the restaurant owner or administrator to approve the integration again."

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
	tok, err := g.verifier.Verify(c.UserContext(), raw)
	if err != nil {
		if errors.Is(err, auth.ErrKeysUnavailable) {
			slog.Warn("cannot verify tokens: JWKS unavailable", "request_id", httpx.RequestID(c))
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

// operation is the handler of one partner operation. The checks answer in
// this order: token, partner rate limit, grant, scopes, restaurant and
// organization boundary, upstream availability; then the request is proxied.
// A read whose partner has room in its quota defers its rate-limit count
// (ratelimit.Count) until the request is written to the service, so the
// Redis round trip overlaps the service's work, and is answered by that
// decision: the same answer as if the count had come first.
func (g *Gateway) operation(op routes.Operation) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if ambiguousPath(c.Path()) {
			// The route matched the raw path; a service could resolve dot
			// segments or encoded slashes to another resource than the one
			// checked here, so such paths are refused like unknown ones.
			return httpx.NotFound()
		}
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
		var sent func()
		if count.Deferred() {
			sent = func() { count.Decide() }
		} else {
			if err := admit(); err != nil {
				return err
			}
			admit = nil
		}
		up, ic, err := g.authorize(c, op, tok)
		if err != nil {
			if admit != nil {
				if refused := admit(); refused != nil {
					return refused
				}
			}
			return err
		}
		err = up.Forward(c, proxy.Request{InternalContext: g.keys.Sign(ic), Sent: sent, Admit: admit})
		if errors.Is(err, proxy.ErrUnreachable) {
			slog.Warn("upstream unreachable", "service", op.Service, "operation", op.ID, "error", err, "request_id", ic.RequestID)
			return httpx.Unavailable(op.Write)
		}
		return err
	}
}

// authorize applies the grant, scope, boundary and availability checks to a
// request with a valid token, and returns the upstream and the internal
// context to forward it with.
func (g *Gateway) authorize(c *fiber.Ctx, op routes.Operation, tok *auth.Token) (*proxy.Upstream, internalctx.Context, error) {
	rid := httpx.RequestID(c)
	ic := internalctx.Context{ClientID: tok.ClientID, UserID: tok.Subject, GrantID: tok.GrantID, RequestID: rid}
	grant, err := g.grants.Get(c.UserContext(), grants.Caller{ClientID: tok.ClientID, UserID: tok.Subject, GrantID: tok.GrantID, RequestID: rid})
	switch {
	case errors.Is(err, grants.ErrNotFound):
		return nil, ic, g.insufficientScope(g.neededScopes(op, nil), DescriptionRevoked)
	case err != nil:
		slog.Warn("grant lookup failed", "error", err, "request_id", rid)
		return nil, ic, httpx.Unavailable(op.Write)
	}
	if grant.ClientID != tok.ClientID || grant.UserID != tok.Subject {
		return nil, ic, g.invalidToken("The access token does not match its authorization.")
	}
	needed := g.neededScopes(op, grant)
	if !grant.Usable(g.now()) {
		return nil, ic, g.insufficientScope(needed, DescriptionRevoked)
	}
	var missing []string
	for _, s := range needed {
		if !tok.HasScope(s) || !grant.HasScope(s) {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return nil, ic, g.insufficientScope(needed, fmt.Sprintf("This operation needs the scope(s) %s, which this authorization does not grant.", strings.Join(missing, ", ")))
	}
	ic.Scopes = effectiveScopes(tok, grant)
	if op.RestaurantScoped {
		if err := g.boundary(c, op, grant, &ic); err != nil {
			return nil, ic, err
		}
	}
	up := g.upstreams[op.Service]
	if up == nil {
		if op.Write {
			return nil, ic, &httpx.Error{Status: http.StatusServiceUnavailable, Code: httpx.CodeCapabilityDisabled, Message: "This capability is disabled in this environment. No change was made."}
		}
		return nil, ic, &httpx.Error{Status: http.StatusServiceUnavailable, Code: httpx.CodeServiceUnavailable, Message: "This operation is not available in this environment."}
	}
	return up, ic, nil
}

// neededScopes are the operation's scopes, plus svc.organization.read for an
// organization-boundary grant on restaurant-scoped calls and the restaurant list.
func (g *Gateway) neededScopes(op routes.Operation, grant *grants.Grant) []string {
	needed := append([]string{}, op.Scopes...)
	if grant != nil && grant.Boundary == "organization" && (op.RestaurantScoped || op.ListsRestaurants) {
		for _, s := range needed {
			if s == routes.ScopeOrganizationRead {
				return needed
			}
		}
		needed = append(needed, routes.ScopeOrganizationRead)
	}
	return needed
}

func effectiveScopes(tok *auth.Token, grant *grants.Grant) []string {
	out := make([]string, 0, len(tok.Scopes))
	for _, s := range tok.Scopes {
		if grant.HasScope(s) {
			out = append(out, s)
		}
	}
	return out
}

// boundary applies the restaurant and organization_id rules (gaps.md,
// "Gateway rules"). Anything outside the grant answers the same 404 as an
// unknown restaurant.
func (g *Gateway) boundary(c *fiber.Ctx, op routes.Operation, grant *grants.Grant, ic *internalctx.Context) error {
	for _, p := range op.UUIDParams {
		if !isUUID(c.Params(p)) {
			return httpx.NotFound()
		}
	}
	for _, p := range op.OpaqueParams {
		if v := c.Params(p); len(v) < 1 || len(v) > 255 {
			return httpx.NotFound()
		}
	}
	rid := strings.ToLower(c.Params("restaurantId"))
	r := grant.Restaurant(rid)
	if r == nil {
		return httpx.NotFound()
	}
	if len(c.Context().QueryArgs().PeekMulti("organization_id")) > 1 {
		return httpx.BadRequest("Pass organization_id at most once.")
	}
	orgParam := strings.ToLower(c.Query("organization_id"))
	if orgParam != "" && !isUUID(orgParam) {
		return httpx.BadRequest("organization_id must be an organizationId (a UUID) returned by GET /v1/organizations.")
	}
	if grant.Boundary == "organization" {
		if orgParam == "" {
			if len(grant.Organizations) > 1 {
				return httpx.BadRequest("organization_id is required: this authorization covers several organizations. Pass the organizationId from GET /v1/organizations that contains the restaurant.")
			}
			if len(grant.Organizations) == 1 {
				orgParam = grant.Organizations[0].OrganizationID
			}
		}
		org := grant.Organization(orgParam)
		if org == nil || !containsFold(org.RestaurantIDs, rid) {
			return httpx.NotFound()
		}
		ic.OrganizationID = org.OrganizationID
	} else if orgParam != "" {
		if !containsFold(r.OrganizationIDs, orgParam) {
			return httpx.NotFound()
		}
		ic.OrganizationID = orgParam
	}
	ic.Tenant = &internalctx.Tenant{ID: r.RestaurantID, TimeZone: r.TimeZone, DayStartHour: r.DayStartHour, Currency: r.Currency, Country: r.Country}
	return nil
}

// ambiguousPath reports dot segments and encoded slashes, backslashes or
// dots, which different HTTP stacks resolve differently.
func ambiguousPath(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	lp := strings.ToLower(p)
	return strings.Contains(lp, "%2f") || strings.Contains(lp, "%5c") || strings.Contains(lp, "%2e") || strings.Contains(p, "\\")
}

func containsFold(list []string, v string) bool {
	for _, x := range list {
		if strings.EqualFold(x, v) {
			return true
		}
	}
	return false
}

// isUUID accepts the canonical 8-4-4-4-12 hexadecimal form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		ch := s[i]
		switch i {
		case 8, 13, 18, 23:
			if ch != '-' {
				return false
			}
		default:
			if !('0' <= ch && ch <= '9' || 'a' <= ch && ch <= 'f' || 'A' <= ch && ch <= 'F') {
				return false
			}
		}
	}
	return true
}
