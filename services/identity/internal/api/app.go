// Package api is the identity service's HTTP surface: on the public listener
// the OAuth endpoints and pages, partner operations and the gateway's internal
// API (both behind the gateway-signed internal context); on the internal
// listener the operator's admin API.
package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/google/uuid"

	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/identity/internal/domain"
	"partnerapi.dev/services/identity/internal/oauth"
	"partnerapi.dev/services/identity/internal/store"
)

// Deps is what the HTTP surface needs.
type Deps struct {
	Store      *store.Store
	OAuth      *oauth.Server
	Keyring    *internalctx.Keyring
	AdminToken string
	// Secret keys the browser session cookie and CSRF tokens.
	Secret   []byte
	Secure   bool
	GrantTTL time.Duration
	Ready    []httpx.Check
	Metrics  http.Handler
}

// MaxBody is the largest request body the admin API accepts: the directory
// import of a large demo data set exceeds the partner API's 1 MiB. The public
// application keeps the default, the gateway's own cap.
const MaxBody = 16 << 20

// New builds the public application: the OAuth endpoints and pages, partner
// operations and the gateway's internal API. The admin API is not on it.
func New(d Deps) *fiber.App {
	pages := newPages(d.OAuth, d.Secret, d.Secure, d.GrantTTL)
	o := oauthEndpoints{srv: d.OAuth}
	return httpx.New(httpx.Options{Name: "identity", Ready: d.Ready}, func(r fiber.Router) {
		r.Get("/.well-known/oauth-authorization-server", mount(o.metadata))
		r.Get("/oauth2/jwks", mount(o.jwks))
		r.Get("/oauth2/authorize", mount(pages.ServeHTTP))
		r.Post("/oauth2/authorize", mount(pages.ServeHTTP))
		r.Post("/oauth2/token", mount(o.token))
		r.Post("/oauth2/revoke", mount(o.revoke))
		r.Post("/oauth2/introspect", mount(o.introspect))

		p := partner{st: d.Store}
		v1 := r.Group("/v1", internalctx.Require(d.Keyring))
		v1.Get("/restaurants", p.restaurants)
		v1.Get("/organizations", p.organizations)
		r.Get("/internal/v1/grants/:grantId", internalctx.Require(d.Keyring), p.internalGrant)
	})
}

// Internal builds the application of the internal listener
// (INTERNAL_HTTP_ADDR), which only the cluster reaches: the operator's admin
// API and metrics. No path of the public listener, and so none the gateway
// forwards, leads to it; the admin token is a second lock, not the only one.
func Internal(d Deps) *fiber.App {
	return httpx.NewInternal(httpx.Options{Name: "identity", Ready: d.Ready, BodyLimit: MaxBody}, d.Metrics, func(r fiber.Router) {
		a := admin{st: d.Store, keys: d.OAuth.Keys}
		g := r.Group("/admin/v1", requireAdmin(d.AdminToken))
		g.Post("/directory/import", a.importDirectory)
		g.Post("/users", a.createUser)
		g.Post("/organizations", a.createOrganization)
		g.Post("/restaurants", a.createRestaurant)
		g.Post("/memberships", a.createMembership)
		g.Get("/clients", a.listClients)
		g.Post("/clients", a.createClient)
		g.Get("/clients/:clientId", a.getClient)
		g.Patch("/clients/:clientId", a.updateClient)
		g.Post("/clients/:clientId/approve", a.setClientStatus(domain.ClientApproved))
		g.Post("/clients/:clientId/suspend", a.setClientStatus(domain.ClientSuspended))
		g.Get("/grants", a.listGrants)
		g.Get("/grants/:grantId", a.getGrant)
		g.Post("/grants/:grantId/revoke", a.revokeGrant)
		g.Get("/keys", a.listKeys)
		g.Post("/keys/rotate", a.rotateKeys)
	})
}

// mount serves a net/http handler (fosite speaks net/http) with the
// request's Fiber user context, which carries the trace span. The fasthttp
// request context is not used: its Done races with server shutdown.
func mount(h http.HandlerFunc) fiber.Handler {
	return func(c *fiber.Ctx) error {
		uctx := c.UserContext()
		return adaptor.HTTPHandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h(w, r.WithContext(uctx))
		})(c)
	}
}

// apiError maps domain and store errors to the envelope, in one place.
func apiError(err error, write bool) error {
	var ve *domain.ValidationError
	var he *httpx.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &he):
		return he
	case errors.As(err, &ve):
		return httpx.BadRequest("%s", ve.Error())
	case errors.Is(err, domain.ErrNotFound):
		return httpx.NotFound()
	case errors.Is(err, domain.ErrConflict):
		return httpx.Conflict("A resource with this id already exists.")
	case database.IsUnavailable(err), errors.Is(err, context.Canceled):
		return httpx.Unavailable(write)
	case database.IsConflict(err):
		return httpx.Conflict("A concurrent change won; retry.")
	}
	return err
}

func requireAdmin(token string) fiber.Handler {
	want := sha256.Sum256([]byte(token))
	return func(c *fiber.Ctx) error {
		got, ok := strings.CutPrefix(c.Get(fiber.HeaderAuthorization), "Bearer ")
		h := sha256.Sum256([]byte(got))
		if !ok || token == "" || subtle.ConstantTimeCompare(h[:], want[:]) != 1 {
			return &httpx.Error{Status: http.StatusUnauthorized, Code: httpx.CodeInvalidToken, Description: "Send the operator token as Authorization: Bearer <ADMIN_TOKEN>.",
				Header: map[string]string{fiber.HeaderWWWAuthenticate: `Bearer realm="identity-admin"`}}
		}
		return c.Next()
	}
}

type partner struct{ st *store.Store }

func (p partner) activeGrant(c *fiber.Ctx) (string, error) {
	ic := internalctx.From(c)
	if ic.GrantID == "" {
		return "", httpx.NotFound()
	}
	g, _, err := p.st.Grant(c.UserContext(), ic.GrantID)
	if err != nil {
		return "", apiError(err, false)
	}
	if g.Status != "active" {
		return "", &httpx.Error{Status: http.StatusForbidden, Code: httpx.CodeInsufficientScope, Description: "The authorization " + g.Status + "; ask the owner to approve again."}
	}
	return g.ID, nil
}

func (p partner) restaurants(c *fiber.Ctx) error {
	id, err := p.activeGrant(c)
	if err != nil {
		return err
	}
	l, err := p.st.Restaurants(c.UserContext(), id)
	if err != nil {
		return apiError(err, false)
	}
	meta := fiber.Map{"authorization_boundary": l.Boundary}
	if l.Boundary == domain.BoundaryOrganization {
		meta["restaurants_truncated"] = l.Truncated
		meta["authorization_coverage"] = fiber.Map{
			"authorized_restaurant_count": l.Coverage.Authorized,
			"current_restaurant_count":    l.Coverage.Current,
			"additional_restaurant_count": l.Coverage.Additional,
			"reauthorization_available":   l.Coverage.ReauthorizationAvailable,
		}
	}
	return c.JSON(fiber.Map{"data": l.Items, "meta": meta})
}

func (p partner) organizations(c *fiber.Ctx) error {
	id, err := p.activeGrant(c)
	if err != nil {
		return err
	}
	l, err := p.st.Organizations(c.UserContext(), id)
	if err != nil {
		return apiError(err, false)
	}
	return c.JSON(fiber.Map{"data": l})
}

// internalGrant is the gateway's grant lookup. When the signed context
// names a grant, it must be the one asked for.
func (p partner) internalGrant(c *fiber.Ctx) error {
	id := c.Params("grantId")
	if ic := internalctx.From(c); ic.GrantID != "" && ic.GrantID != id {
		return httpx.NotFound()
	}
	if _, err := uuid.Parse(id); err != nil {
		return httpx.NotFound()
	}
	g, err := p.st.InternalGrantView(c.UserContext(), id)
	if err != nil {
		return apiError(err, false)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(g)
}
