// Package menus calls the menus service's internal catalog API for the
// partner request being answered: it forwards the gateway-signed internal
// context unchanged (the menus service checks it as it would the gateway's
// own call) and turns the menus service's answers into domain errors.
package menus

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"

	"partnerapi.dev/pkg/fault"
	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/catalogimport/internal/domain"
	"partnerapi.dev/services/contracts"
)

// maxAnswer bounds an answer read from the menus service.
const maxAnswer = 4 << 20

// Client reaches the menus service at BaseURL.
type Client struct {
	BaseURL string
	HTTP    *http.Client
}

// For returns the menus service as seen by the request whose signed
// internal context is signedContext.
func (c *Client) For(signedContext, requestID string) domain.Menus {
	return &caller{c: c, signed: signedContext, requestID: requestID}
}

type caller struct {
	c                 *Client
	signed, requestID string
}

func (m *caller) Target(ctx context.Context, restaurantID, menuID string) (contracts.CatalogTarget, error) {
	var t contracts.CatalogTarget
	err := m.do(ctx, http.MethodGet, path(contracts.MenusCatalogTargetPath, restaurantID, menuID), "", nil, &t)
	return t, err
}

func (m *caller) WriteBatch(ctx context.Context, restaurantID string, b contracts.CatalogBatch) (contracts.CatalogBatchResult, error) {
	var r contracts.CatalogBatchResult
	// The menus service writes a batch once per batch id: the key lets the
	// HTTP client send the batch again on a new connection when a kept-alive
	// one turns out closed by a menus replica shutting down.
	err := m.do(ctx, http.MethodPost, path(contracts.MenusCatalogBatchPath, restaurantID, ""), b.BatchID, b, &r)
	return r, err
}

func path(template, restaurantID, menuID string) string {
	p := strings.Replace(template, "{restaurantId}", url.PathEscape(restaurantID), 1)
	return strings.Replace(p, "{menuId}", url.PathEscape(menuID), 1)
}

// do sends one call; the answer's data goes into out. A call with an
// idempotency key may be sent twice (net/http resends such a request when
// its reused connection was closed before an answer).
func (m *caller) do(ctx context.Context, method, p, idempotencyKey string, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(m.c.BaseURL, "/")+p, rd)
	if err != nil {
		return err
	}
	req.Header.Set(internalctx.Header, m.signed)
	req.Header.Set(httpx.HeaderRequestID, m.requestID)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}
	otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := m.c.HTTP.Do(req)
	if err != nil {
		return domain.ErrMenusUnavailable
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return domain.ErrMenusUnavailable
	}
	if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusCreated {
		var env struct {
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(raw, &env); err != nil || len(env.Data) == 0 {
			return fmt.Errorf("menus %s %s: answer is not {\"data\": ...}: %w", method, p, err)
		}
		if err := json.Unmarshal(env.Data, out); err != nil {
			return fmt.Errorf("menus %s %s: %w", method, p, err)
		}
		return nil
	}
	var e httpx.Envelope
	_ = json.Unmarshal(raw, &e)
	switch resp.StatusCode {
	case http.StatusNotFound:
		return domain.ErrMenuNotFound
	case http.StatusConflict:
		return fault.New(fault.Conflict, orDefault(e.Message, "The menu changed; nothing was written. Plan again."))
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return fault.New(fault.Invalid, orDefault(e.Message, "The menus service refused the import."))
	}
	if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
		return domain.ErrMenusUnavailable
	}
	// 401/403: this service and the menus service disagree about the
	// internal context (keys out of step): an error of ours, not the partner's.
	return fmt.Errorf("menus %s %s answered %d %s", method, p, resp.StatusCode, e.Error)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
