// Package api serves the accounting operations to the gateway and the NDJSON
// ingestion endpoint to the POS side: it binds and validates requests and
// calls the domain, whose errors declare their kind (pkg/fault) for httpx's
// one mapping to answers.
package api

import (
	"bytes"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/gofiber/fiber/v2"
	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/pkg/cursor"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/accounting/internal/domain"
	"partnerapi.dev/services/contracts"
)

// IngestBodyLimit caps one ingestion request (NDJSON batches).
const IngestBodyLimit = 32 << 20

// writeBodyLimit is the contract's one megabyte for write bodies.
const writeBodyLimit = 1 << 20

// Handlers serves the accounting API.
type Handlers struct {
	Service     *domain.Service
	Cursors     *cursor.Codec
	Keys        *internalctx.Keyring
	IngestToken string
}

// Routes registers the service's routes.
func (h *Handlers) Routes(r fiber.Router) {
	r.Post(contracts.AccountingIngestPath, h.ingest)
	g := r.Group("/v1/restaurants/:restaurantId", internalctx.Require(h.Keys))
	g.Get("/payment-report", h.report)
	g.Get("/accounting-summary", h.summary)
	g.Get("/refunds", h.refunds)
	g.Get("/payment-correction-workspace", h.workspace)
	g.Post("/payment-corrections/preview", h.preview)
	g.Post("/payment-corrections/apply", h.write("correct"))
	g.Post("/payment-corrections/undo", h.write("undo"))
}

// App builds the public application (used by serve and by tests).
func (h *Handlers) App(ready []httpx.Check) *fiber.App {
	return httpx.New(httpx.Options{Name: "accounting", BodyLimit: IngestBodyLimit, Ready: ready}, h.Routes)
}

// Internal builds the application of the internal listener: health,
// readiness and metrics.
func Internal(ready []httpx.Check, metrics http.Handler) *fiber.App {
	return httpx.NewInternal(httpx.Options{Name: "accounting", Ready: ready}, metrics, nil)
}

// tenantOf checks that the gateway authorized the restaurant in the path.
func tenantOf(c *fiber.Ctx) (domain.Tenant, error) {
	ic, id, err := internalctx.PathTenant(c)
	if err != nil {
		return domain.Tenant{}, err
	}
	loc, err := domain.Location(ic.Tenant.TimeZone)
	if err != nil {
		return domain.Tenant{}, err
	}
	return domain.Tenant{ID: id, Loc: loc, TimeZone: ic.Tenant.TimeZone, DayStartHour: ic.Tenant.DayStartHour, Currency: ic.Tenant.Currency}, nil
}

func query(c *fiber.Ctx) (url.Values, error) {
	q, err := url.ParseQuery(string(c.Request().URI().QueryString()))
	if err != nil {
		return nil, httpx.BadRequest("The query string is malformed.")
	}
	return q, nil
}

func (h *Handlers) report(c *fiber.Ctx) error {
	t, err := tenantOf(c)
	if err != nil {
		return err
	}
	q, err := query(c)
	if err != nil {
		return err
	}
	p, err := parsePeriod(q)
	if err != nil {
		return err
	}
	rep, err := h.Service.Report(c.UserContext(), t, p, true)
	if err != nil {
		return err
	}
	return httpx.Data(c, rep)
}

func (h *Handlers) summary(c *fiber.Ctx) error {
	t, err := tenantOf(c)
	if err != nil {
		return err
	}
	q, err := query(c)
	if err != nil {
		return err
	}
	p, err := parsePeriod(q)
	if err != nil {
		return err
	}
	sum, err := h.Service.Summary(c.UserContext(), t, p)
	if err != nil {
		return err
	}
	return httpx.Data(c, sum)
}

func (h *Handlers) workspace(c *fiber.Ctx) error {
	t, err := tenantOf(c)
	if err != nil {
		return err
	}
	q, err := query(c)
	if err != nil {
		return err
	}
	p, text, err := h.parseWorkspace(q, t)
	if err != nil {
		return err
	}
	canWrite := internalctx.From(c).HasScope(contracts.ScopeCorrectionsWrite)
	ws, err := h.Service.Workspace(c.UserContext(), t, p, text, canWrite)
	if err != nil {
		return err
	}
	return httpx.Data(c, ws)
}

type refundCursor struct {
	Date string `json:"d"`
	At   int64  `json:"t"` // occurredAt, Unix microseconds
	ID   string `json:"i"`
}

type refundPageView struct {
	RestaurantID       string                   `json:"restaurantId"`
	Period             domain.Period            `json:"period"`
	Policy             string                   `json:"policy"`
	Events             []domain.RefundEventView `json:"events"`
	NextCursor         *string                  `json:"nextCursor"`
	Truncated          bool                     `json:"truncated"`
	LegacyTiming       bool                     `json:"legacyTiming"`
	IncompleteEvidence bool                     `json:"incompleteEvidence"`
}

func (h *Handlers) refunds(c *fiber.Ctx) error {
	t, err := tenantOf(c)
	if err != nil {
		return err
	}
	q, err := query(c)
	if err != nil {
		return err
	}
	rq, err := parseRefunds(q)
	if err != nil {
		return err
	}
	binding := cursor.Bind("accounting/refunds/"+t.ID, q, "cursor", "limit", "organization_id")
	var after *domain.RefundPosition
	if rq.Cursor != "" {
		var pos refundCursor
		if err := h.Cursors.Decode(rq.Cursor, binding, &pos); err != nil {
			if errors.Is(err, cursor.ErrFilterMismatch) {
				return httpx.BadRequest("cursor was issued for different filters; repeat the first request's filters with it, or start without a cursor.")
			}
			return httpx.BadRequest("cursor is invalid; pass nextCursor unchanged.")
		}
		d, err := bizdate.Parse(pos.Date)
		if err != nil {
			return httpx.BadRequest("cursor is invalid; pass nextCursor unchanged.")
		}
		after = &domain.RefundPosition{Date: d, OccurredAt: time.UnixMicro(pos.At).UTC(), ID: pos.ID}
	}
	page, err := h.Service.Refunds(c.UserContext(), t, rq, after)
	if err != nil {
		return err
	}
	out := refundPageView{RestaurantID: t.ID, Period: domain.Period{StartDate: rq.Start, EndDate: rq.End, TimeZone: t.TimeZone, DayStartHour: t.DayStartHour},
		Policy: domain.RefundPolicy, Events: make([]domain.RefundEventView, len(page.Events)),
		LegacyTiming: page.Flags.Legacy, IncompleteEvidence: page.Flags.Incomplete}
	for i, e := range page.Events {
		out.Events[i] = domain.ViewRefund(e)
	}
	if page.Next != nil {
		next, err := h.Cursors.Encode(binding, refundCursor{Date: page.Next.Date.String(), At: page.Next.OccurredAt.UnixMicro(), ID: page.Next.ID})
		if err != nil {
			return err
		}
		out.NextCursor = &next
		out.Truncated = true
	}
	return httpx.Data(c, out)
}

func limitBody(c *fiber.Ctx) error {
	if len(c.Body()) > writeBodyLimit {
		return httpx.PayloadTooLarge(writeBodyLimit)
	}
	return nil
}

func (h *Handlers) preview(c *fiber.Ctx) error {
	t, err := tenantOf(c)
	if err != nil {
		return err
	}
	if err := limitBody(c); err != nil {
		return err
	}
	var in domain.CorrectionInput
	if err := httpx.DecodeJSON(c, &in); err != nil {
		return err
	}
	p, err := h.Service.Preview(c.UserContext(), t, in)
	if err != nil {
		return err
	}
	return httpx.Data(c, p)
}

func (h *Handlers) write(action string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		t, err := tenantOf(c)
		if err != nil {
			return err
		}
		if err := limitBody(c); err != nil {
			return err
		}
		var in domain.WriteInput
		if err := httpx.DecodeJSON(c, &in); err != nil {
			return err
		}
		res, err := h.Service.Write(c.UserContext(), t, internalctx.From(c).ClientID, action, in)
		if err != nil {
			return err
		}
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(append(append([]byte(`{"data":`), res.Data...), '}'))
	}
}

type ingestResult struct {
	Sources int `json:"sources"`
	Refunds int `json:"refunds"`
}

func (h *Handlers) ingest(c *fiber.Ctx) error {
	if err := httpx.RequireBearer(c, h.IngestToken, "ingestion token"); err != nil {
		return err
	}
	body := c.Body()
	if len(bytes.TrimSpace(body)) == 0 {
		return httpx.BadRequest("The body is empty; send NDJSON, one accounting record per line.")
	}
	b, err := domain.ParseBatch(bytes.NewReader(body))
	if err != nil {
		return err
	}
	// An ingested batch is a bulk load: its statements may outlast a
	// partner request's bound (DATABASE_STATEMENT_TIMEOUT).
	if err := h.Service.Repo.Ingest(database.Unbounded(c.UserContext()), b); err != nil {
		return err
	}
	return httpx.Data(c, ingestResult{Sources: len(b.Sources), Refunds: len(b.Refunds)})
}
