package grants

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/contracts"
)

// Usage is the gateway's record of use: the minute in which each grant last
// authorized a request, kept in memory and sent to identity in one call per
// interval (the connected-apps page shows it as "last used"). A request
// costs one map write under a mutex; no request waits for a write anywhere.
type Usage struct {
	base   string
	keys   *internalctx.Keyring
	client *http.Client

	mu      sync.Mutex
	pending map[string]time.Time
}

var tracer = otel.Tracer("partnerapi.dev/gateway/grants")

// UsageInterval is how often the record is sent to identity.
const UsageInterval = 30 * time.Second

// maxPendingUses bounds the record between two sends; grants first used
// beyond it in one interval are recorded in the next.
const maxPendingUses = contracts.MaxGrantUses

// NewUsage returns a record sending to identityURL.
func NewUsage(identityURL string, keys *internalctx.Keyring, client *http.Client) *Usage {
	return &Usage{base: identityURL, keys: keys, client: client, pending: map[string]time.Time{}}
}

// Record notes that grantID authorized a request at now.
func (u *Usage) Record(grantID string, now time.Time) {
	minute := now.UTC().Truncate(time.Minute)
	u.mu.Lock()
	// Requests finish out of order: a later minute is never replaced by
	// an earlier one.
	if cur, ok := u.pending[grantID]; ok && cur.Before(minute) || !ok && len(u.pending) < maxPendingUses {
		u.pending[grantID] = minute
	}
	u.mu.Unlock()
}

// Send sends what was recorded since the last send. On failure the uses
// are kept for the next send (a newer one recorded meanwhile wins).
func (u *Usage) Send(ctx context.Context) error {
	u.mu.Lock()
	batch := u.pending
	u.pending = map[string]time.Time{}
	u.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	in := contracts.GrantUses{Uses: make([]contracts.GrantUse, 0, len(batch))}
	for id, at := range batch {
		in.Uses = append(in.Uses, contracts.GrantUse{GrantID: id, UsedAt: at})
	}
	// A send is work (idle gateways send nothing): its own trace, which
	// identity's answer joins.
	ctx, span := tracer.Start(ctx, "grant use record", trace.WithAttributes(attribute.Int("grants", len(batch))))
	defer span.End()
	err := internalctx.PostJSON(ctx, u.client, u.keys, u.base+contracts.GrantUsePath, internalctx.Context{}, in, nil)
	if err != nil {
		span.SetStatus(codes.Error, "not sent")
		u.mu.Lock()
		for id, at := range batch {
			if cur, ok := u.pending[id]; !ok && len(u.pending) < maxPendingUses || ok && cur.Before(at) {
				u.pending[id] = at
			}
		}
		u.mu.Unlock()
	}
	return err
}

// Run sends the record every interval until ctx ends, then once more.
func (u *Usage) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if err := u.Send(ctx); err != nil {
				slog.WarnContext(ctx, "grant use not sent; kept for the next send", "error", err)
			}
		case <-ctx.Done():
			last, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := u.Send(last); err != nil {
				slog.Warn("grant use not sent at shutdown", "error", err)
			}
			return
		}
	}
}
