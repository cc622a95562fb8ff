// Package api serves order search and order details to the gateway and the
// NDJSON ingestion endpoint to the POS side: it binds and validates requests
// and calls the domain, whose errors declare their kind (pkg/fault) for
// httpx's one mapping to answers.
package api

import (
	"bytes"
	"errors"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"partnerapi.dev/pkg/cursor"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/orders/internal/domain"
)

// IngestBodyLimit caps one ingestion request (NDJSON batches).
const IngestBodyLimit = 32 << 20

// Handlers serves the orders API.
type Handlers struct {
	Repo        domain.Repository
	Cursors     *cursor.Codec
	Keys        *internalctx.Keyring
	IngestToken string

	locs sync.Map // time-zone name -> *time.Location
}

// Routes registers the service's routes.
func (h *Handlers) Routes(r fiber.Router) {
	r.Post("/internal/v1/orders/ingest", h.ingest)
	g := r.Group("/v1/restaurants/:restaurantId/orders", internalctx.Require(h.Keys))
	g.Get("", h.search)
	g.Get("/:orderId", h.details)
}

// App builds the public application (used by serve and by tests).
func (h *Handlers) App(ready []httpx.Check) *fiber.App {
	return httpx.New(httpx.Options{Name: "orders", BodyLimit: IngestBodyLimit, Ready: ready}, h.Routes)
}

// Internal builds the application of the internal listener
// (INTERNAL_HTTP_ADDR), which only the cluster reaches: health, readiness and
// metrics.
func Internal(ready []httpx.Check, metrics http.Handler) *fiber.App {
	return httpx.NewInternal(httpx.Options{Name: "orders", Ready: ready}, metrics, nil)
}

type tenant struct {
	id           string
	loc          *time.Location
	timeZone     string
	dayStartHour int
	currency     string
}

// tenantOf checks that the gateway authorized the restaurant in the path.
func (h *Handlers) tenantOf(c *fiber.Ctx) (tenant, error) {
	ic, id, err := internalctx.PathTenant(c)
	if err != nil {
		return tenant{}, err
	}
	loc, err := h.location(ic.Tenant.TimeZone)
	if err != nil {
		return tenant{}, err
	}
	return tenant{id: id, loc: loc, timeZone: ic.Tenant.TimeZone, dayStartHour: ic.Tenant.DayStartHour, currency: ic.Tenant.Currency}, nil
}

func (h *Handlers) location(name string) (*time.Location, error) {
	if v, ok := h.locs.Load(name); ok {
		return v.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "" {
		return nil, errors.New("restaurant time zone unknown: " + name)
	}
	h.locs.Store(name, loc)
	return loc, nil
}

type cursorPosition struct {
	At int64  `json:"t"` // occurredAt, Unix microseconds
	ID string `json:"o"`
}

func (h *Handlers) search(c *fiber.Ctx) error {
	t, err := h.tenantOf(c)
	if err != nil {
		return err
	}
	q, err := url.ParseQuery(string(c.Request().URI().QueryString()))
	if err != nil {
		return httpx.BadRequest("The query string is malformed.")
	}
	req, err := ParseSearch(q, t.id, t.loc, t.dayStartHour)
	if err != nil {
		return err
	}
	binding := cursor.Bind("orders/search/"+t.id, q, "cursor", "limit", "organization_id")
	if req.Cursor != "" {
		var pos cursorPosition
		if err := h.Cursors.Decode(req.Cursor, binding, &pos); err != nil {
			if errors.Is(err, cursor.ErrFilterMismatch) {
				return httpx.BadRequest("cursor was issued for different filters; repeat the first request's filters with it, or start without a cursor.")
			}
			return httpx.BadRequest("cursor is invalid; pass nextCursor unchanged.")
		}
		req.Filter.After = &domain.Position{OccurredAt: time.UnixMicro(pos.At).UTC(), OrderID: pos.ID}
	}
	page, err := h.Repo.Search(c.UserContext(), req.Filter)
	if err != nil {
		return err
	}
	out := searchView{RestaurantID: t.id, SearchScope: req.Scope, Currency: t.currency, Matches: make([]summaryView, len(page.Orders))}
	if req.Filter.StartDate != nil {
		out.Period = &periodView{*req.Filter.StartDate, *req.Filter.EndDate, t.timeZone, t.dayStartHour}
	}
	for i, o := range page.Orders {
		out.Matches[i] = summary(o)
	}
	if page.Next != nil {
		next, err := h.Cursors.Encode(binding, cursorPosition{At: page.Next.OccurredAt.UnixMicro(), ID: page.Next.OrderID})
		if err != nil {
			return err
		}
		out.NextCursor = &next
		out.Truncated = true
	}
	return httpx.Data(c, out)
}

func (h *Handlers) details(c *fiber.Ctx) error {
	t, err := h.tenantOf(c)
	if err != nil {
		return err
	}
	orderID, err := url.PathUnescape(c.Params("orderId"))
	if err != nil {
		return httpx.BadRequest("orderId is not a valid path segment.")
	}
	if err := domain.OrderIDParam(orderID); err != nil {
		return err
	}
	q, err := url.ParseQuery(string(c.Request().URI().QueryString()))
	if err != nil {
		return httpx.BadRequest("The query string is malformed.")
	}
	if k, _ := httpx.AllowQuery(q, false, "organization_id"); k != "" {
		return httpx.BadRequest("Query parameter %q is not supported by order details.", k)
	}
	o, err := h.Repo.Get(c.UserContext(), t.id, orderID)
	if err != nil {
		return err
	}
	return httpx.Data(c, detailsResponse{RestaurantID: t.id, Currency: o.Currency, Order: details(o)})
}

type ingestResult struct {
	Stored int `json:"stored"`
}

func (h *Handlers) ingest(c *fiber.Ctx) error {
	if err := httpx.RequireBearer(c, h.IngestToken, "ingestion token"); err != nil {
		return err
	}
	body := c.Body()
	if len(bytes.TrimSpace(body)) == 0 {
		return httpx.BadRequest("The body is empty; send NDJSON, one order per line.")
	}
	// An ingested batch is a bulk load: its statements may outlast a
	// partner request's bound (DATABASE_STATEMENT_TIMEOUT).
	n, err := domain.Ingestion{Repo: h.Repo, Events: domain.OrderEvents{View: OrderEventData}.Decide}.Ingest(database.Unbounded(c.UserContext()), bytes.NewReader(body), nil)
	if err != nil {
		return err
	}
	return httpx.Data(c, ingestResult{Stored: n})
}
