// Package api serves the catalog import operations to the gateway: it binds
// and validates requests, calls the domain with the menus service acting for
// the request, and answers views; domain errors declare their kind
// (pkg/fault) for httpx's one mapping to answers.
package api

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/catalogimport/internal/domain"
	"partnerapi.dev/services/contracts"
)

// Handlers serves the catalog import API.
type Handlers struct {
	Settings domain.Settings
	// Menus returns the menus service acting for one request (its signed
	// internal context and request id).
	Menus   func(signedContext, requestID string) domain.Menus
	Imports domain.Repository
	Keys    *internalctx.Keyring
	// NamingSet is the menu resources' naming set served: NamingA (default)
	// or NamingB, as the gateway's and the menus service's.
	NamingSet string
}

// Routes registers the service's routes.
func (h *Handlers) Routes(r fiber.Router) {
	g := r.Group("/v1/restaurants/:restaurantId/catalog-import", internalctx.Require(h.Keys))
	g.Get("/capabilities", h.capabilities)
	g.Get("/targets/:menuId", h.target)
	g.Post("/plan", h.plan)
	g.Post("/apply", h.apply)
}

// App builds the public application (used by serve and by tests).
func (h *Handlers) App(ready []httpx.Check) *fiber.App {
	return httpx.New(httpx.Options{Name: "catalogimport", Ready: ready}, h.Routes)
}

// Internal builds the application of the internal listener
// (INTERNAL_HTTP_ADDR): health, readiness and metrics.
func Internal(ready []httpx.Check, metrics http.Handler) *fiber.App {
	return httpx.NewInternal(httpx.Options{Name: "catalogimport", Ready: ready}, metrics, nil)
}

// restaurantOf checks that the gateway authorized the restaurant in the path.
func restaurantOf(c *fiber.Ctx) (string, error) {
	_, id, err := internalctx.PathTenant(c)
	if err != nil {
		return "", err
	}
	return id, nil
}

func (h *Handlers) importer(c *fiber.Ctx) *domain.Importer {
	return &domain.Importer{Settings: h.Settings, Menus: h.Menus(c.Get(internalctx.Header), httpx.RequestID(c)), Imports: h.Imports}
}

func (h *Handlers) capabilities(c *fiber.Ctx) error {
	rid, err := restaurantOf(c)
	if err != nil {
		return err
	}
	if err := noQueryBut(c); err != nil {
		return err
	}
	return h.respond(c, fiber.StatusOK, capabilitiesView(rid, h.Settings.Capabilities()), wholeViewB)
}

func (h *Handlers) target(c *fiber.Ctx) error {
	rid, err := restaurantOf(c)
	if err != nil {
		return err
	}
	menuID := strings.ToLower(c.Params("menuId"))
	if !domain.IsUUID(menuID) {
		return httpx.NotFound()
	}
	if err := noQueryBut(c); err != nil {
		return err
	}
	t, err := h.importer(c).Menus.Target(c.UserContext(), rid, menuID)
	if err != nil {
		return err
	}
	return h.respond(c, fiber.StatusOK, targetView(rid, t), wholeViewB)
}

// planBody is the plan request: exactly the contract's fields.
type planBody struct {
	Target   *domain.Target             `json:"target"`
	Document *contracts.CatalogDocument `json:"document"`
}

func (h *Handlers) plan(c *fiber.Ctx) error {
	rid, err := restaurantOf(c)
	if err != nil {
		return err
	}
	var b planBody
	if err := h.decodeBody(c, &b); err != nil {
		return err
	}
	if b.Target == nil {
		return httpx.BadRequest("target is required: {\"mode\": \"new_draft\"} or {\"mode\": \"existing_draft\", \"menuId\": ...}.")
	}
	if b.Document == nil {
		return httpx.BadRequest("document is required: the catalog import document to plan.")
	}
	p, err := h.importer(c).Plan(c.UserContext(), rid, domain.PlanRequest{Target: *b.Target, Document: *b.Document})
	if err != nil {
		return err
	}
	return h.respond(c, fiber.StatusOK, planView(p), planViewB)
}

// applyBody is the apply request.
type applyBody struct {
	Target           *domain.Target             `json:"target"`
	Document         *contracts.CatalogDocument `json:"document"`
	ExpectedPlanHash string                     `json:"expectedPlanHash"`
	IdempotencyKey   string                     `json:"idempotencyKey"`
	Confirmed        *bool                      `json:"confirmed"`
}

func (h *Handlers) apply(c *fiber.Ctx) error {
	rid, err := restaurantOf(c)
	if err != nil {
		return err
	}
	var b applyBody
	if err := h.decodeBody(c, &b); err != nil {
		return err
	}
	if b.Target == nil {
		return httpx.BadRequest("target is required, as in the plan.")
	}
	if b.Document == nil {
		return httpx.BadRequest("document is required, as in the plan.")
	}
	ic := internalctx.From(c)
	res, err := h.importer(c).Apply(c.UserContext(), domain.Caller{ClientID: ic.ClientID, UserID: ic.UserID}, rid, domain.ApplyRequest{
		Target: *b.Target, Document: *b.Document, ExpectedPlanHash: b.ExpectedPlanHash,
		IdempotencyKey: b.IdempotencyKey, Confirmed: b.Confirmed,
	})
	if err != nil {
		return err
	}
	return h.respond(c, statusOf(res.Outcome), res.Data, appliedViewB)
}

// statusOf is the HTTP status answering an apply's outcome.
func statusOf(o domain.Outcome) int {
	if o == domain.Created {
		return http.StatusCreated
	}
	return http.StatusOK
}

// noQueryBut refuses query parameters other than organization_id (the
// gateway's).
func noQueryBut(c *fiber.Ctx) error {
	q := url.Values{}
	c.Request().URI().QueryArgs().VisitAll(func(k, v []byte) { q.Add(string(k), string(v)) })
	if k, _ := httpx.AllowQuery(q, false, "organization_id"); k != "" {
		return httpx.BadRequest("Query parameter %q is not supported here.", k)
	}
	return nil
}
