// Package api is the identity service's HTTP surface: on the public listener
// the OAuth endpoints and pages, partner operations and the gateway's internal
// API (both behind the gateway-signed internal context); on the internal
// listener the operator's admin API.
package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"

	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/identity/internal/domain"
	"partnerapi.dev/services/identity/internal/oauth"
)

// Deps is what the HTTP surface needs.
type Deps struct {
	Repo       domain.Repository
	OAuth      *oauth.Server
	Keyring    *internalctx.Keyring
	AdminToken string
	// Secret keys the browser session cookie and CSRF tokens.
	Secret   []byte
	Secure   bool
	GrantTTL time.Duration
	// PublicOrigin is the public base URL's scheme and host: the Origin
	// the pages' forms are posted from.
	PublicOrigin string
	Sessions     SessionSettings
	// ListCap bounds the lists in partner answers (DefaultListCap when
	// nil); a pointer so tests can lower it on a running service.
	ListCap *int
	Ready   []httpx.Check
	Metrics http.Handler
	// Activity asks the events service what an app did (nil: the
	// connected-apps page shows no activity).
	Activity ActivitySource
}

// MaxBody is the largest request body the admin API accepts: the directory
// import of a large demo data set exceeds the partner API's 1 MiB. The public
// application keeps the default, the gateway's own cap.
const MaxBody = 16 << 20

// DefaultListCap bounds the lists in partner answers.
const DefaultListCap = 500

// New builds the public application: the OAuth endpoints and pages, partner
// operations and the gateway's internal API. The admin API is not on it.
func New(d Deps) *fiber.App {
	pages := newPages(d)
	o := oauthEndpoints{srv: d.OAuth, repo: d.Repo}
	return httpx.New(httpx.Options{Name: "identity", Ready: d.Ready, Polled: []string{contracts.GrantChangesPath}}, func(r fiber.Router) {
		r.Get("/.well-known/oauth-authorization-server", mount(o.metadata))
		r.Get("/oauth2/jwks", mount(o.jwks))
		r.Get("/oauth2/authorize", mount(pages.ServeHTTP))
		r.Post("/oauth2/authorize", mount(pages.ServeHTTP))
		r.Post("/oauth2/token", mount(o.token))
		r.Post("/oauth2/revoke", mount(o.revoke))
		r.Post("/oauth2/introspect", mount(o.introspect))

		acct := account{p: pages}
		r.Get(accountPath, mount(acct.list))
		r.Post(accountPath+"/sign-in", mount(acct.signIn))
		r.Post(accountPath+"/sign-out", mount(acct.signOut))
		r.Post(accountPath+"/sign-out-everywhere", mount(acct.signOutEverywhere))
		r.Get(accountPath+"/authorizations/:grantId", withGrant(acct.confirm))
		r.Post(accountPath+"/authorizations/:grantId/revoke", withGrant(acct.revoke))
		r.Post(accountPath+"/authorizations/:grantId/approve-new", withGrant(acct.approveNew))

		p := partner{repo: d.Repo, listCap: d.ListCap}
		if p.listCap == nil {
			n := DefaultListCap
			p.listCap = &n
		}
		v1 := r.Group("/v1", internalctx.Require(d.Keyring))
		v1.Get("/restaurants", p.restaurants)
		v1.Get("/organizations", p.organizations)
		r.Post(contracts.GrantUsePath, internalctx.Require(d.Keyring), p.grantUse)
		r.Get("/internal/v1/grants/:grantId", internalctx.Require(d.Keyring), p.internalGrant)
		r.Get(contracts.GrantChangesPath, internalctx.Require(d.Keyring), p.grantChanges)
	})
}

// Internal builds the application of the internal listener
// (INTERNAL_HTTP_ADDR), which only the cluster reaches: the operator's admin
// API and metrics. No path of the public listener, and so none the gateway
// forwards, leads to it; the admin token is a second lock, not the only one.
func Internal(d Deps) *fiber.App {
	return httpx.NewInternal(httpx.Options{Name: "identity", Ready: d.Ready, BodyLimit: MaxBody}, d.Metrics, func(r fiber.Router) {
		a := admin{repo: d.Repo, keys: d.OAuth.Keys, cursors: adminCursors(d.Secret)}
		g := r.Group("/admin/v1", requireAdmin(d.AdminToken))
		g.Post("/directory/import", a.importDirectory)
		g.Post("/users", a.createUser)
		g.Get("/organizations", a.listOrganizations)
		g.Post("/organizations", a.createOrganization)
		g.Get("/restaurants", a.listRestaurants)
		g.Post("/restaurants", a.createRestaurant)
		g.Get("/users", a.listUsers)
		g.Delete("/users/:userId/sessions", a.endUserSessions)
		g.Get("/memberships", a.listMemberships)
		g.Post("/memberships", a.createMembership)
		g.Get("/clients", a.listClients)
		g.Post("/clients", a.createClient)
		g.Get("/clients/:clientId", a.getClient)
		g.Patch("/clients/:clientId", a.updateClient)
		g.Post("/clients/:clientId/approve", a.setClientStatus(domain.ClientApproved))
		g.Post("/clients/:clientId/suspend", a.setClientStatus(domain.ClientSuspended))
		g.Post("/clients/:clientId/secret", a.rotateClientSecret)
		g.Get("/grants", a.listGrants)
		g.Get("/connected-apps", a.listConnectedApps)
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

type partner struct {
	repo    domain.Repository
	listCap *int
}

// activeCoverage loads what the caller's grant covers; a grant no longer
// active answers 403.
func (p partner) activeCoverage(c *fiber.Ctx) (domain.GrantCoverage, error) {
	ic := internalctx.From(c)
	if ic.GrantID == "" {
		return domain.GrantCoverage{}, httpx.NotFound()
	}
	cov, err := p.repo.Coverage(c.UserContext(), ic.GrantID)
	if err != nil {
		return cov, err
	}
	if st := cov.Grant.Status; st != "active" {
		return cov, &httpx.Error{Status: http.StatusForbidden, Code: httpx.CodeInsufficientScope, Description: "The authorization " + st + "; ask the owner to approve again."}
	}
	return cov, nil
}

func (p partner) restaurants(c *fiber.Ctx) error {
	cov, err := p.activeCoverage(c)
	if err != nil {
		return err
	}
	l := restaurantsView(cov, *p.listCap)
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
	cov, err := p.activeCoverage(c)
	if err != nil {
		return err
	}
	return httpx.Data(c, organizationsView(cov, *p.listCap))
}

// internalGrant is the gateway's grant lookup. When the signed context
// names a grant, it must be the one asked for.
func (p partner) internalGrant(c *fiber.Ctx) error {
	id := c.Params("grantId")
	if ic := internalctx.From(c); ic.GrantID != "" && ic.GrantID != id {
		return httpx.NotFound()
	}
	if !domain.CanonicalID(id) {
		return httpx.NotFound()
	}
	g, err := loadGrantView(c.UserContext(), p.repo, id)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(g)
}

// maxGrantChanges bounds one answer of grantChanges: more, and the
// follower drops its whole cache instead.
const maxGrantChanges = 1000

// grantChanges lists the changes that can narrow what grants allow, for
// the gateway and the events service to drop what they cached
// (contracts.GrantChangesPath).
func (p partner) grantChanges(c *fiber.Ctx) error {
	var since time.Time
	if v := c.Query("since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return domain.Invalid("since: must be an RFC 3339 time, the now of the previous answer")
		}
		since = t
	}
	ans, err := p.repo.GrantChanges(c.UserContext(), since, contracts.GrantChangesOverlap, maxGrantChanges)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(ans)
}

// grantUse takes the gateway's record of use (contracts.GrantUses).
func (p partner) grantUse(c *fiber.Ctx) error {
	var in contracts.GrantUses
	if err := httpx.DecodeJSON(c, &in); err != nil {
		return err
	}
	if len(in.Uses) > contracts.MaxGrantUses {
		return domain.Invalid("uses: at most %d", contracts.MaxGrantUses)
	}
	uses := make(map[string]time.Time, len(in.Uses))
	for _, u := range in.Uses {
		if at, ok := uses[u.GrantID]; !ok || at.Before(u.UsedAt) {
			uses[u.GrantID] = u.UsedAt
		}
	}
	if err := p.repo.RecordGrantUse(c.UserContext(), uses); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// loadGrantView builds the gateway's view of a grant: coverage in three
// queries (two for a restaurant grant) and the revoked tokens in one.
func loadGrantView(ctx context.Context, repo domain.Grants, id string) (contracts.Grant, error) {
	cov, err := repo.Coverage(ctx, id)
	if err != nil {
		return contracts.Grant{}, err
	}
	families, ids, err := repo.Revocations(ctx, id)
	if err != nil {
		return contracts.Grant{}, err
	}
	return grantView(cov, families, ids), nil
}
