package internalctx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// ErrNotFound means the other service answered 404.
var ErrNotFound = errors.New("not found")

// ErrUnavailable means the other service could not be asked or answered
// neither 200 nor 404.
var ErrUnavailable = errors.New("service unavailable")

// MaxAnswer bounds an answer GetJSON decodes.
const MaxAnswer = 8 << 20

// GetJSON asks another service's internal API for url with the signed
// context c and decodes a 200 answer into out.
func GetJSON(ctx context.Context, client *http.Client, keys *Keyring, url string, c Context, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if c.RequestID != "" {
		req.Header.Set("X-Request-Id", c.RequestID)
	}
	req.Header.Set(Header, keys.Sign(c))
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return ErrNotFound
	default:
		return fmt.Errorf("%w: %s answered %d", ErrUnavailable, req.URL.Path, resp.StatusCode)
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, MaxAnswer)).Decode(out); err != nil {
		return fmt.Errorf("%w: decode %s: %w", ErrUnavailable, req.URL.Path, err)
	}
	return nil
}
