package seed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Client posts data to the services' admin and ingestion APIs.
type Client struct {
	HTTP *http.Client
}

// PostJSON sends body as JSON with an optional bearer token and fails on a
// non-2xx answer, quoting the service's message.
func (c Client) PostJSON(ctx context.Context, url, token string, body any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return c.Post(ctx, url, token, "application/json", bytes.NewReader(raw))
}

// Post sends a body of the given content type.
func (c Client) Post(ctx context.Context, url, token, contentType string, body io.Reader) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Minute}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("POST %s: %s: %s", url, resp.Status, bytes.TrimSpace(msg))
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return nil
}

// LoadDirectory imports the directory into identity through its admin API;
// identityURL is identity's internal listener.
func (c Client) LoadDirectory(ctx context.Context, identityURL, adminToken string, d Directory) error {
	return c.PostJSON(ctx, identityURL+"/admin/v1/directory/import", adminToken, d)
}
