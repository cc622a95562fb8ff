// Package eventsclient forwards a service's outbox (pkg/outbox) to the events
// service's append API: the configuration every emitting service reads, the
// HTTP sender and the relay's start and stop.
package eventsclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"gorm.io/gorm"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/lifecycle"
	"partnerapi.dev/pkg/outbox"
	"partnerapi.dev/services/contracts"
)

// Config is the events part of a service's configuration. Without a URL the
// service still records its events; they wait in its outbox until a URL is
// configured.
type Config struct {
	URL   string        `env:"EVENTS_URL"`
	Token config.Secret `env:"EVENTS_TOKEN"`
}

// Validate requires a token with a URL.
func (c Config) Validate() error {
	if c.URL == "" {
		return nil
	}
	if !strings.HasPrefix(c.URL, "http://") && !strings.HasPrefix(c.URL, "https://") {
		return errors.New("EVENTS_URL must start with http:// or https://")
	}
	if len(c.Token.Reveal()) < 16 {
		return errors.New("EVENTS_TOKEN must be at least 16 characters when EVENTS_URL is set")
	}
	return nil
}

// Sender posts events to the append API as source; it succeeds only on a
// 2xx answer, which acknowledges every event of the call.
func Sender(baseURL string, token config.Secret, source string, client *http.Client) outbox.SendFunc {
	if client == nil {
		client = &http.Client{Timeout: 15 * time.Second}
	}
	url := strings.TrimRight(baseURL, "/") + contracts.EventsAppendPath
	return func(ctx context.Context, events []outbox.Recorded) error {
		body := contracts.EventAppend{Source: source, Events: make([]contracts.EventRecord, len(events))}
		for i, e := range events {
			body.Events[i] = contracts.EventRecord{ID: e.ID, Type: e.Type, RestaurantID: e.RestaurantID, OccurredAt: e.OccurredAt.UTC(), Data: e.Data}
			if e.GrantID != nil {
				body.Events[i].Actor = &contracts.EventActor{ClientID: deref(e.ClientID), GrantID: *e.GrantID, UserID: deref(e.UserID)}
			}
		}
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(raw))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token.Reveal())
		otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(req.Header))
		res, err := client.Do(req)
		if err != nil {
			return fmt.Errorf("events service: %w", err)
		}
		defer res.Body.Close()
		answer, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		if res.StatusCode/100 != 2 {
			return fmt.Errorf("events service answered %d: %.200s", res.StatusCode, answer)
		}
		return nil
	}
}

// StartRelay forwards db's outbox in the background, when cfg has a URL,
// until ctx ends or the returned closer runs; the closer stops the relay and
// waits for it (list it before the database's closer).
func StartRelay(ctx context.Context, db *gorm.DB, cfg Config, source string) lifecycle.Closer {
	if cfg.URL == "" {
		slog.Info("EVENTS_URL is empty: events are recorded in the outbox but not forwarded")
		return lifecycle.Closer{Name: "outbox relay", Fn: func(context.Context) error { return nil }}
	}
	relay := &outbox.Relay{DB: db, Send: Sender(cfg.URL, cfg.Token, source, nil)}
	return lifecycle.Go(ctx, "outbox relay", func(ctx context.Context) { _ = relay.Run(ctx) })
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
