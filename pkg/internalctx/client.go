package internalctx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
)

// ErrNotFound means the other service answered 404.
var ErrNotFound = errors.New("not found")

// ErrUnavailable means the other service could not be asked or answered
// neither 200 nor 404.
var ErrUnavailable = errors.New("service unavailable")

// MaxAnswer bounds an answer GetJSON and PostJSON decode.
const MaxAnswer = 8 << 20

// GetJSON asks another service's internal API for url with the signed
// context c and decodes a 200 answer into out.
func GetJSON(ctx context.Context, client *http.Client, keys *Keyring, url string, c Context, out any) error {
	return call(ctx, client, keys, http.MethodGet, url, c, nil, out)
}

// PostJSON sends in as JSON to another service's internal API at url with
// the signed context c; a 2xx answer is success, and its body is decoded
// into out when out is not nil.
func PostJSON(ctx context.Context, client *http.Client, keys *Keyring, url string, c Context, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return call(ctx, client, keys, http.MethodPost, url, c, body, out)
}

func call(ctx context.Context, client *http.Client, keys *Keyring, method, url string, c Context, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(req.Header))
	if c.RequestID != "" {
		req.Header.Set("X-Request-Id", c.RequestID)
	}
	req.Header.Set(Header, keys.Sign(c))
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return ErrNotFound
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("%w: %s answered %d", ErrUnavailable, req.URL.Path, resp.StatusCode)
	case out == nil:
		return nil
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, MaxAnswer)).Decode(out); err != nil {
		return fmt.Errorf("%w: decode %s: %w", ErrUnavailable, req.URL.Path, err)
	}
	return nil
}
