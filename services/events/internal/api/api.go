// Package api serves the events service: the internal append API the
// services' outbox relays call (bearer EVENTS_TOKEN) and the partners' pull
// feed, which the gateway forwards with the signed internal context. It binds
// and bounds requests, calls the domain, and answers through httpx's one
// mapping of errors.
package api

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/events/internal/domain"
	"partnerapi.dev/services/events/internal/sealed"
)

// AppendBodyLimit caps one append call (up to domain.MaxAppendEvents events
// of up to domain.MaxEventData bytes).
const AppendBodyLimit = 32 << 20

// Handlers serves the events API.
type Handlers struct {
	Repo     domain.Repository
	Webhooks domain.WebhookRepository
	// Activity answers identity's connected-apps queries.
	Activity domain.ActivityRepository
	Notify   domain.Notifier
	Keys     *internalctx.Keyring
	// Token is EVENTS_TOKEN, the relays' bearer token.
	Token string
	// Secrets seals the secrets in the stored answers of creates and
	// rotations (the store seals the endpoints' own).
	Secrets *sealed.Keyring
	// AllowLoopbackHTTP accepts http:// endpoint URLs on loopback (a test
	// setting, WEBHOOKS_ALLOW_LOOPBACK).
	AllowLoopbackHTTP bool
	// NamingSet is the deployment's menu naming set (domain.NamingA when
	// empty): menu events in the feed use its names.
	NamingSet string
	// Now is the clock of webhook writes (time.Now when nil).
	Now func() time.Time
}

// Routes registers the service's routes.
func (h *Handlers) Routes(r fiber.Router) {
	r.Post(contracts.EventsAppendPath, h.append)
	r.Post(contracts.ConnectedAppsPath, internalctx.Require(h.Keys), h.connectedApps)
	g := r.Group("/v1/restaurants/:restaurantId", internalctx.Require(h.Keys))
	g.Get("/events", h.feed)
	h.webhookRoutes(g)
}

// App builds the public application (used by serve and by tests). Its write
// timeout leaves room for the longest long poll.
func (h *Handlers) App(ready []httpx.Check) *fiber.App {
	return httpx.New(httpx.Options{Name: "events", BodyLimit: AppendBodyLimit, Ready: ready,
		WriteTimeout: domain.MaxWait + 15*time.Second}, h.Routes)
}

// Internal builds the application of the internal listener
// (INTERNAL_HTTP_ADDR), which only the cluster reaches: health, readiness and
// metrics.
func Internal(ready []httpx.Check, metrics http.Handler) *fiber.App {
	return httpx.NewInternal(httpx.Options{Name: "events", Ready: ready}, metrics, nil)
}

func (h *Handlers) append(c *fiber.Ctx) error {
	if err := httpx.RequireBearer(c, h.Token, "events token"); err != nil {
		return err
	}
	var in contracts.EventAppend
	if err := httpx.DecodeJSON(c, &in); err != nil {
		return err
	}
	batch, err := domain.CheckAppend(in)
	if err != nil {
		return err
	}
	res, err := h.Repo.Append(c.UserContext(), in.Source, batch)
	if err != nil {
		return err
	}
	// Ids repeated within the call count as duplicates too.
	res.Duplicates += len(in.Events) - len(batch)
	return httpx.Data(c, contracts.EventAppendResult{Appended: res.Appended, Duplicates: res.Duplicates})
}

// connectedApps answers identity's question for the owners' connected-apps
// page (contracts.ConnectedAppsQuery): no partner reaches this path.
func (h *Handlers) connectedApps(c *fiber.Ctx) error {
	var q contracts.ConnectedAppsQuery
	if err := httpx.DecodeJSON(c, &q); err != nil {
		return err
	}
	out, err := domain.ConnectedApps(c.UserContext(), h.Activity, q)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(out)
}

type eventView = domain.EventEnvelope

type feedView struct {
	Events    []eventView `json:"events"`
	NextAfter int64       `json:"nextAfter"`
	HasMore   bool        `json:"hasMore"`
	HeadSeq   int64       `json:"headSeq"`
	OldestSeq int64       `json:"oldestSeq"`
}

func (h *Handlers) feed(c *fiber.Ctx) error {
	ic, id, err := internalctx.PathTenant(c)
	if err != nil || !ic.HasScope(contracts.ScopeRestaurantRead) {
		return httpx.NotFound()
	}
	q, err := feedQuery(c)
	if err != nil {
		return err
	}
	q.RestaurantID, q.Scopes, q.ClientID = id, ic.Scopes, ic.ClientID
	page, err := domain.Feed(c.UserContext(), h.Repo, h.Notify, q)
	var expired *domain.ErrCursorExpired
	if errors.As(err, &expired) {
		return httpx.CursorExpired(expired.Error(), map[string]any{"oldestSeq": expired.OldestSeq})
	}
	if err != nil {
		return err
	}
	out := feedView{Events: make([]eventView, len(page.Events)), NextAfter: page.NextAfter, HasMore: page.HasMore,
		HeadSeq: page.HeadSeq, OldestSeq: page.OldestSeq}
	for i, e := range page.Events {
		out.Events[i] = e.Envelope(h.NamingSet)
	}
	return httpx.Data(c, out)
}

// feedQuery reads and bounds the feed's query parameters.
func feedQuery(c *fiber.Ctx) (domain.Query, error) {
	q := domain.Query{Limit: domain.DefaultLimit, After: domain.FromOldest}
	vals, err := url.ParseQuery(string(c.Request().URI().QueryString()))
	if err != nil {
		return q, httpx.BadRequest("The query string is malformed.")
	}
	for k, v := range vals {
		if len(v) != 1 {
			return q, httpx.BadRequest("Give %s once.", k)
		}
		switch k {
		case "organization_id":
		case "after":
			n, err := strconv.ParseInt(v[0], 10, 64)
			if err != nil || n < 0 {
				return q, httpx.BadRequest("after must be a whole number, 0 or more: the nextAfter or seq you read last.")
			}
			q.After = n
		case "limit":
			n, err := strconv.Atoi(v[0])
			if err != nil || n < 1 || n > domain.MaxLimit {
				return q, httpx.BadRequest("limit must be a whole number from 1 to %d.", domain.MaxLimit)
			}
			q.Limit = n
		case "wait":
			n, err := strconv.Atoi(v[0])
			if err != nil || n < 0 || n > int(domain.MaxWait/time.Second) {
				return q, httpx.BadRequest("wait must be a whole number of seconds from 0 to %d.", int(domain.MaxWait/time.Second))
			}
			q.Wait = time.Duration(n) * time.Second
		case "types":
			f, err := domain.ParseTypes(v[0])
			if err != nil {
				return q, err
			}
			q.Types = f
		default:
			return q, httpx.BadRequest("Query parameter %q is not allowed here; use after, limit, types or wait.", k)
		}
	}
	return q, nil
}
