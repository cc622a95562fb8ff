package api

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/idempotency"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/events/internal/domain"
)

// webhookRoutes registers endpoint management under the restaurant.
func (h *Handlers) webhookRoutes(g fiber.Router) {
	g.Post("/webhook-endpoints", h.createEndpoint)
	g.Get("/webhook-endpoints", h.listEndpoints)
	g.Patch("/webhook-endpoints/:endpointId", h.updateEndpoint)
	g.Delete("/webhook-endpoints/:endpointId", h.deleteEndpoint)
	g.Post("/webhook-endpoints/:endpointId/rotate-secret", h.rotateSecret)
	g.Post("/webhook-endpoints/:endpointId/test", h.sendTest)
	g.Get("/webhook-endpoints/:endpointId/deliveries", h.listDeliveries)
	g.Post("/webhook-endpoints/:endpointId/deliveries/:deliveryId/retry", h.retryDelivery)
	g.Post("/webhook-endpoints/:endpointId/replay", h.replay)
}

func (h *Handlers) now() time.Time {
	if h.Now != nil {
		return h.Now().UTC()
	}
	return time.Now().UTC()
}

// webhookCaller is who manages endpoints: the gateway authorized the
// restaurant of the path and the scopes.
type webhookCaller struct {
	owner  domain.Owner
	scopes []string
}

func callerOf(c *fiber.Ctx) (webhookCaller, error) {
	ic, id, err := internalctx.PathTenant(c)
	if err != nil || ic.ClientID == "" || ic.GrantID == "" ||
		!ic.HasScope(contracts.ScopeRestaurantRead) || !ic.HasScope(contracts.ScopeWebhooksManage) {
		return webhookCaller{}, httpx.NotFound()
	}
	return webhookCaller{owner: domain.Owner{ClientID: ic.ClientID, RestaurantID: id, GrantID: ic.GrantID}, scopes: ic.Scopes}, nil
}

// endpointParam reads the endpoint id of the path; one that is not a uuid
// names nothing.
func endpointParam(c *fiber.Ctx) (string, error) {
	v := strings.ToLower(c.Params("endpointId"))
	if !domain.IsUUID(v) {
		return "", httpx.NotFound()
	}
	return v, nil
}

// endpointWrite reads what a write on one endpoint starts with: the caller,
// the endpoint id of the path, and the body, decoded into body and checked.
func endpointWrite(c *fiber.Ctx, body interface{ check() error }) (webhookCaller, string, error) {
	wc, err := callerOf(c)
	if err != nil {
		return webhookCaller{}, "", err
	}
	id, err := endpointParam(c)
	if err != nil {
		return webhookCaller{}, "", err
	}
	if err := httpx.DecodeJSON(c, body); err != nil {
		return webhookCaller{}, "", err
	}
	if err := body.check(); err != nil {
		return webhookCaller{}, "", err
	}
	return wc, id, nil
}

type endpointView struct {
	ID         string   `json:"id"`
	URL        string   `json:"url"`
	EventTypes []string `json:"eventTypes"`
	Disabled   bool     `json:"disabled"`
	// DisabledReason says why the service disabled it; null otherwise.
	DisabledReason *string `json:"disabledReason"`
	// PreviousSecretExpiresAt is the end of a rotation's grace period,
	// while the previous secret still signs; null otherwise.
	PreviousSecretExpiresAt *time.Time `json:"previousSecretExpiresAt"`
	CreatedAt               time.Time  `json:"createdAt"`
	UpdatedAt               time.Time  `json:"updatedAt"`
}

func viewEndpoint(e domain.Endpoint, now time.Time) endpointView {
	v := endpointView{ID: e.ID, URL: e.URL, EventTypes: e.EventTypes, Disabled: e.Disabled, CreatedAt: e.CreatedAt.UTC(), UpdatedAt: e.UpdatedAt.UTC()}
	if e.DisabledReason != "" {
		v.DisabledReason = &e.DisabledReason
	}
	if e.PreviousSecret != "" && now.Before(e.PreviousUntil) {
		t := e.PreviousUntil.UTC()
		v.PreviousSecretExpiresAt = &t
	}
	return v
}

type deliveryView struct {
	ID             string     `json:"id"`
	EventID        string     `json:"eventId"`
	EventType      string     `json:"eventType"`
	Seq            int64      `json:"seq"`
	Status         string     `json:"status"`
	Attempts       int        `json:"attempts"`
	LastStatusCode *int       `json:"lastStatusCode"`
	LastError      *string    `json:"lastError"`
	LatencyMS      *int       `json:"latencyMs"`
	LastAttemptAt  *time.Time `json:"lastAttemptAt"`
	NextAttemptAt  *time.Time `json:"nextAttemptAt"`
	CreatedAt      time.Time  `json:"createdAt"`
}

func viewDelivery(d domain.Delivery) deliveryView {
	v := deliveryView{ID: strconv.FormatInt(d.ID, 10), EventID: d.EventID, EventType: d.EventType, Seq: d.Seq, Status: d.Status,
		Attempts: d.Attempts, CreatedAt: d.CreatedAt.UTC()}
	if d.LastStatus != 0 {
		v.LastStatusCode = &d.LastStatus
	}
	if d.LastError != "" {
		v.LastError = &d.LastError
	}
	if d.LastAttemptAt != nil {
		t := d.LastAttemptAt.UTC()
		v.LastAttemptAt, v.LatencyMS = &t, &d.LatencyMS
	}
	if d.NextAttemptAt != nil && d.Status == domain.StatusPending {
		t := d.NextAttemptAt.UTC()
		v.NextAttemptAt = &t
	}
	return v
}

// writeBody is what every write body has.
type writeBody struct {
	IdempotencyKey string `json:"idempotencyKey"`
}

func (w writeBody) check() error {
	if !idempotency.ValidKey(w.IdempotencyKey) {
		return httpx.BadRequest("idempotencyKey is required and must be a uuid.")
	}
	return nil
}

// write runs fn once per idempotency key and answers its result (the
// stored answer again, marked replayed, for a repeat).
func (h *Handlers) write(c *fiber.Ctx, wc webhookCaller, op, key string, body any, fn func(domain.WebhookTx) (int, any, error)) error {
	k := domain.WriteKey{Scope: wc.owner.ClientID + "/" + wc.owner.RestaurantID + "/" + op, Key: key,
		Body: map[string]any{"path": c.Path(), "body": body}}
	ans, err := h.Webhooks.WriteWebhooks(c.UserContext(), k, fn)
	if err != nil {
		return err
	}
	if op == "createWebhookEndpoint" || op == "rotateWebhookEndpointSecret" {
		if ans.Data, err = h.openAnswer(ans.Data); err != nil {
			return err
		}
	}
	c.Status(ans.Status).Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(append(append([]byte(`{"data":`), ans.Data...), '}'))
}

// withSealedSecret is the answer of a create or rotate as it is stored
// with its key: the secret sealed, so no stored answer holds one in clear.
// A replay opens it again, since a client that lost the first answer
// needs the secret.
func (h *Handlers) withSealedSecret(e domain.Endpoint, now time.Time) (endpointWithSecret, error) {
	s, err := h.Secrets.Seal(e.Secret, e.ID)
	return endpointWithSecret{Endpoint: viewEndpoint(e, now), Secret: s}, err
}

// openAnswer opens the secret of a stored create or rotate answer. An
// error answer (no endpoint) passes as it is.
func (h *Handlers) openAnswer(data []byte) ([]byte, error) {
	var a endpointWithSecret
	if err := json.Unmarshal(data, &a); err != nil || a.Secret == "" {
		return data, nil //nolint:nilerr // not an endpoint answer: replayed as it was stored
	}
	s, err := h.Secrets.Open(a.Secret, a.Endpoint.ID)
	if err != nil {
		return nil, err
	}
	a.Secret = s
	return json.Marshal(a) //nolint:gosec // G117: the create and rotate answers show the partner its signing secret (shown in these answers only)
}

type createEndpointRequest struct {
	writeBody
	URL        string   `json:"url"`
	EventTypes []string `json:"eventTypes"`
}

type endpointWithSecret struct {
	Endpoint endpointView `json:"endpoint"`
	// Secret is shown in this answer only.
	Secret   string `json:"secret"`
	Replayed bool   `json:"replayed"`
}

func (h *Handlers) createEndpoint(c *fiber.Ctx) error {
	wc, err := callerOf(c)
	if err != nil {
		return err
	}
	var req createEndpointRequest
	if err := httpx.DecodeJSON(c, &req); err != nil {
		return err
	}
	if err := req.check(); err != nil {
		return err
	}
	return h.write(c, wc, "createWebhookEndpoint", req.IdempotencyKey, req, func(tx domain.WebhookTx) (int, any, error) {
		now := h.now()
		e, err := domain.CreateEndpoint(tx, wc.owner, req.URL, req.EventTypes, wc.scopes, h.AllowLoopbackHTTP, now)
		if err != nil {
			return 0, nil, err
		}
		a, err := h.withSealedSecret(e, now)
		return http.StatusCreated, a, err
	})
}

func (h *Handlers) listEndpoints(c *fiber.Ctx) error {
	wc, err := callerOf(c)
	if err != nil {
		return err
	}
	vals, err := url.ParseQuery(string(c.Request().URI().QueryString()))
	if err != nil {
		return httpx.BadRequest("The query string is malformed.")
	}
	// organization_id is the gateway's (checked there).
	if k, _ := httpx.AllowQuery(vals, false, "organization_id"); k != "" {
		return httpx.BadRequest("Query parameter %q is not allowed here.", k)
	}
	eps, err := h.Webhooks.Endpoints(c.UserContext(), wc.owner)
	if err != nil {
		return err
	}
	now := h.now()
	out := make([]endpointView, len(eps))
	for i, e := range eps {
		out[i] = viewEndpoint(e, now)
	}
	return httpx.Data(c, out)
}

type updateEndpointRequest struct {
	writeBody
	URL        *string   `json:"url"`
	EventTypes *[]string `json:"eventTypes"`
	Disabled   *bool     `json:"disabled"`
}

type endpointAnswer struct {
	Endpoint endpointView `json:"endpoint"`
	Replayed bool         `json:"replayed"`
}

func (h *Handlers) updateEndpoint(c *fiber.Ctx) error {
	var req updateEndpointRequest
	wc, id, err := endpointWrite(c, &req)
	if err != nil {
		return err
	}
	if req.URL == nil && req.EventTypes == nil && req.Disabled == nil {
		return httpx.BadRequest("Give at least one of url, eventTypes and disabled.")
	}
	return h.write(c, wc, "updateWebhookEndpoint", req.IdempotencyKey, req, func(tx domain.WebhookTx) (int, any, error) {
		now := h.now()
		e, err := domain.UpdateEndpoint(tx, wc.owner, id, domain.EndpointPatch{URL: req.URL, EventTypes: req.EventTypes, Disabled: req.Disabled},
			wc.scopes, h.AllowLoopbackHTTP, now)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, endpointAnswer{Endpoint: viewEndpoint(e, now)}, nil
	})
}

type deletedAnswer struct {
	ID       string `json:"id"`
	Deleted  bool   `json:"deleted"`
	Replayed bool   `json:"replayed"`
}

func (h *Handlers) deleteEndpoint(c *fiber.Ctx) error {
	var req writeBody
	wc, id, err := endpointWrite(c, &req)
	if err != nil {
		return err
	}
	return h.write(c, wc, "deleteWebhookEndpoint", req.IdempotencyKey, req, func(tx domain.WebhookTx) (int, any, error) {
		if err := domain.DeleteEndpoint(tx, wc.owner, id); err != nil {
			return 0, nil, err
		}
		return http.StatusOK, deletedAnswer{ID: id, Deleted: true}, nil
	})
}

type rotateRequest struct {
	writeBody
	// GracePeriodSeconds is how long the current secret keeps signing
	// (default 24 h).
	GracePeriodSeconds *int64 `json:"gracePeriodSeconds"`
}

func (h *Handlers) rotateSecret(c *fiber.Ctx) error {
	var req rotateRequest
	wc, id, err := endpointWrite(c, &req)
	if err != nil {
		return err
	}
	grace := domain.RotationGrace
	if req.GracePeriodSeconds != nil {
		if *req.GracePeriodSeconds < 0 || *req.GracePeriodSeconds > int64(domain.MaxRotationGrace/time.Second) {
			return httpx.BadRequest("gracePeriodSeconds must be from 0 to %d.", int(domain.MaxRotationGrace/time.Second))
		}
		grace = time.Duration(*req.GracePeriodSeconds) * time.Second
	}
	return h.write(c, wc, "rotateWebhookEndpointSecret", req.IdempotencyKey, req, func(tx domain.WebhookTx) (int, any, error) {
		now := h.now()
		e, err := domain.RotateSecret(tx, wc.owner, id, grace, now)
		if err != nil {
			return 0, nil, err
		}
		a, err := h.withSealedSecret(e, now)
		return http.StatusOK, a, err
	})
}

type deliveryAnswer struct {
	Delivery deliveryView `json:"delivery"`
	Replayed bool         `json:"replayed"`
}

func (h *Handlers) sendTest(c *fiber.Ctx) error {
	var req writeBody
	wc, id, err := endpointWrite(c, &req)
	if err != nil {
		return err
	}
	return h.write(c, wc, "sendWebhookTestEvent", req.IdempotencyKey, req, func(tx domain.WebhookTx) (int, any, error) {
		d, err := domain.SendTestEvent(tx, wc.owner, id, h.now())
		if err != nil {
			return 0, nil, err
		}
		return http.StatusAccepted, deliveryAnswer{Delivery: viewDelivery(d)}, nil
	})
}

func (h *Handlers) retryDelivery(c *fiber.Ctx) error {
	did, err := strconv.ParseInt(c.Params("deliveryId"), 10, 64)
	if err != nil || did < 1 {
		return httpx.NotFound()
	}
	var req writeBody
	wc, id, err := endpointWrite(c, &req)
	if err != nil {
		return err
	}
	return h.write(c, wc, "retryWebhookDelivery", req.IdempotencyKey, req, func(tx domain.WebhookTx) (int, any, error) {
		d, err := domain.RetryDelivery(tx, wc.owner, id, did, h.now())
		if err != nil {
			return 0, nil, err
		}
		return http.StatusAccepted, deliveryAnswer{Delivery: viewDelivery(d)}, nil
	})
}

type replayRequest struct {
	writeBody
	AfterSeq *int64     `json:"afterSeq"`
	Since    *time.Time `json:"since"`
}

type replayAnswer struct {
	Enqueued int   `json:"enqueued"`
	LastSeq  int64 `json:"lastSeq"`
	HasMore  bool  `json:"hasMore"`
	Replayed bool  `json:"replayed"`
}

func (h *Handlers) replay(c *fiber.Ctx) error {
	var req replayRequest
	wc, id, err := endpointWrite(c, &req)
	if err != nil {
		return err
	}
	if (req.AfterSeq == nil) == (req.Since == nil) {
		return httpx.BadRequest("Give exactly one of afterSeq (replay the events after that seq) and since (replay the events from that time).")
	}
	var from domain.ReplayFrom
	if req.AfterSeq != nil {
		from.AfterSeq = *req.AfterSeq
	} else {
		from.Since = req.Since.UTC()
	}
	return h.write(c, wc, "replayWebhookEvents", req.IdempotencyKey, req, func(tx domain.WebhookTx) (int, any, error) {
		res, err := domain.Replay(tx, wc.owner, id, from, h.now())
		if err != nil {
			return 0, nil, err
		}
		return http.StatusAccepted, replayAnswer{Enqueued: res.Enqueued, LastSeq: res.LastSeq, HasMore: res.HasMore}, nil
	})
}

type deliveriesPage struct {
	Deliveries []deliveryView `json:"deliveries"`
	// NextBefore is the before of the next (older) page; null at the end.
	NextBefore *string `json:"nextBefore"`
}

func (h *Handlers) listDeliveries(c *fiber.Ctx) error {
	wc, err := callerOf(c)
	if err != nil {
		return err
	}
	id, err := endpointParam(c)
	if err != nil {
		return err
	}
	limit, before := domain.DefaultLimit, int64(0)
	vals, err := url.ParseQuery(string(c.Request().URI().QueryString()))
	if err != nil {
		return httpx.BadRequest("The query string is malformed.")
	}
	for k, v := range vals {
		if len(v) != 1 {
			return httpx.BadRequest("Give %s once.", k)
		}
		switch k {
		case "organization_id":
		case "limit":
			n, err := strconv.Atoi(v[0])
			if err != nil || n < 1 || n > domain.MaxLimit {
				return httpx.BadRequest("limit must be a whole number from 1 to %d.", domain.MaxLimit)
			}
			limit = n
		case "before":
			n, err := strconv.ParseInt(v[0], 10, 64)
			if err != nil || n < 1 {
				return httpx.BadRequest("before must be the nextBefore of the previous page.")
			}
			before = n
		default:
			return httpx.BadRequest("Query parameter %q is not allowed here; use limit or before.", k)
		}
	}
	if _, err := h.Webhooks.Endpoint(c.UserContext(), wc.owner, id); err != nil {
		return err
	}
	ds, err := h.Webhooks.Deliveries(c.UserContext(), id, before, limit+1)
	if err != nil {
		return err
	}
	page := deliveriesPage{Deliveries: []deliveryView{}}
	if len(ds) > limit {
		ds = ds[:limit]
		next := strconv.FormatInt(ds[limit-1].ID, 10)
		page.NextBefore = &next
	}
	for _, d := range ds {
		page.Deliveries = append(page.Deliveries, viewDelivery(d))
	}
	return httpx.Data(c, page)
}
