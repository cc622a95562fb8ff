// Package identityadmin is the operator's client of identity's admin API (the
// internal listener's /admin/v1): partner clients and their grants.
package identityadmin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"partnerapi.dev/services/contracts"
)

// ErrNotFound is identity answering 404 for a client.
var ErrNotFound = errors.New("not found in identity")

// Client is one partner client as identity holds it: the fields the
// operator registers (identity's answer carries timestamps too).
type Client = contracts.PartnerClientRegistration

// NewClient registers a client and Update changes one (nil fields stay):
// identity's admin API bodies.
type (
	NewClient = contracts.PartnerClientRegistration
	Update    = contracts.PartnerClientUpdate
)

// Grant is one user's approval of a client.
type Grant struct {
	ID     string `json:"grantId"`
	Status string `json:"status"`
}

// StatusError is identity answering with an error status other than 404.
type StatusError struct {
	Method, Path string
	Code         int
	Message      string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("identity %s %s: %d %s", e.Method, e.Path, e.Code, e.Message)
}

// StatusCode is the HTTP status identity answered.
func (e *StatusError) StatusCode() int { return e.Code }

// API calls identity's admin API with the admin token.
type API struct {
	BaseURL string
	Token   string
	HTTP    *http.Client
}

// New returns an API client for baseURL (identity's internal listener).
func New(baseURL, token string) *API {
	return &API{BaseURL: strings.TrimRight(baseURL, "/"), Token: token, HTTP: &http.Client{Timeout: 10 * time.Second}}
}

// Get returns the client, or ErrNotFound.
func (a *API) Get(ctx context.Context, clientID string) (Client, error) {
	var c Client
	err := a.do(ctx, http.MethodGet, "/admin/v1/clients/"+url.PathEscape(clientID), nil, &c)
	return c, err
}

// Create registers a client. The secret identity generates for a confidential
// client is returned separately so it never travels in a Client value.
func (a *API) Create(ctx context.Context, n NewClient) (Client, string, error) {
	var out struct {
		Client
		ClientSecret string `json:"clientSecret"`
	}
	err := a.do(ctx, http.MethodPost, "/admin/v1/clients", n, &out)
	return out.Client, out.ClientSecret, err
}

// Update changes a client.
func (a *API) Update(ctx context.Context, clientID string, u Update) (Client, error) {
	var c Client
	err := a.do(ctx, http.MethodPatch, "/admin/v1/clients/"+url.PathEscape(clientID), u, &c)
	return c, err
}

// RotateSecret makes secret the confidential client's secret; the previous one
// keeps working for overlap.
func (a *API) RotateSecret(ctx context.Context, clientID, secret string, overlap time.Duration) error {
	body := struct {
		ClientSecret   string `json:"clientSecret"`
		OverlapSeconds int64  `json:"overlapSeconds"`
	}{secret, int64(overlap.Seconds())}
	return a.do(ctx, http.MethodPost, "/admin/v1/clients/"+url.PathEscape(clientID)+"/secret", body, nil)
}

// Grants lists the client's grants.
func (a *API) Grants(ctx context.Context, clientID string) ([]Grant, error) {
	var gs []Grant
	err := a.do(ctx, http.MethodGet, "/admin/v1/grants?clientId="+url.QueryEscape(clientID), nil, &gs)
	return gs, err
}

// RevokeGrant revokes one grant and the tokens issued under it.
func (a *API) RevokeGrant(ctx context.Context, grantID string) error {
	return a.do(ctx, http.MethodPost, "/admin/v1/grants/"+url.PathEscape(grantID)+"/revoke", nil, nil)
}

func (a *API) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.BaseURL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.Token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode == http.StatusNotFound {
		return ErrNotFound
	}
	if resp.StatusCode >= 300 {
		// The body is identity's error envelope; it never carries a client secret.
		var env struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(b, &env)
		return &StatusError{Method: method, Path: path, Code: resp.StatusCode, Message: env.Error}
	}
	if out == nil {
		return nil
	}
	var wrap struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &wrap); err != nil {
		return fmt.Errorf("identity %s %s: %w", method, path, err)
	}
	return json.Unmarshal(wrap.Data, out)
}
