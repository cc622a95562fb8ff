package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"partnerapi.dev/pkg/webhooksig"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/events/internal/domain"
)

// GrantSource answers a grant's current state (nil: unknown to identity).
type GrantSource interface {
	Get(ctx context.Context, grantID, clientID string) (*contracts.Grant, error)
}

// Worker sends due deliveries.
type Worker struct {
	Repo   domain.WebhookRepository
	Grants GrantSource
	Client *http.Client
	// Now is the clock (time.Now when nil); Rand the jitter source
	// (domain.Jitter when nil). Tests set both.
	Now  func() time.Time
	Rand func() float64
	// Batch is how many deliveries one claim takes; Parallel how many are
	// sent at once.
	Batch    int
	Parallel int
	// Wake, when set, ends a wait between polls early: it receives after
	// appends, which may have queued deliveries due now.
	Wake <-chan struct{}
}

// lease is how long a claimed delivery is hidden from other workers: more
// than one attempt's timeout and a grant lookup.
const lease = 2 * time.Minute

func (w *Worker) now() time.Time {
	if w.Now != nil {
		return w.Now().UTC()
	}
	return time.Now().UTC()
}

func (w *Worker) rnd() float64 {
	if w.Rand != nil {
		return w.Rand()
	}
	return domain.Jitter()
}

// Run sends due deliveries until ctx ends, looking for more every poll when
// the queue is empty, or at once when Wake receives.
func (w *Worker) Run(ctx context.Context, poll time.Duration) {
	for ctx.Err() == nil {
		n, err := w.RunOnce(ctx)
		if err != nil && ctx.Err() == nil {
			slog.Error("webhook deliveries failed", "error", err)
		}
		if n > 0 && err == nil {
			continue
		}
		select {
		case <-ctx.Done():
		case <-w.Wake:
		case <-time.After(poll):
		}
	}
}

// RunOnce claims one batch of due deliveries, sends them and records the
// outcomes; it answers how many it claimed.
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	batch, par := max(w.Batch, 1), max(w.Parallel, 1)
	jobs, err := w.Repo.Claim(ctx, w.now(), lease, batch)
	if err != nil || len(jobs) == 0 {
		return 0, err
	}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for _, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := w.deliver(ctx, j); err != nil {
				mu.Lock()
				firstErr = cmpErr(firstErr, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return len(jobs), firstErr
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// deliver makes one attempt of j and records it.
func (w *Worker) deliver(ctx context.Context, j domain.Job) error {
	now := w.now()
	ep := j.Endpoint
	if ep.ID == "" || ep.Disabled {
		return w.Repo.Finish(ctx, j, domain.Outcome{Status: domain.StatusFailed, Error: "The endpoint is disabled."}, now)
	}
	if j.Event.Data == nil {
		return w.Repo.Finish(ctx, j, domain.Outcome{Status: domain.StatusFailed, Error: "The event is past the retention and no longer kept."}, now)
	}
	g, err := w.Grants.Get(ctx, ep.GrantID, ep.ClientID)
	if err != nil {
		// Identity could not answer: try again shortly, not counted as an
		// attempt nor as the endpoint's failure.
		return w.Repo.Finish(ctx, j, domain.Outcome{Status: domain.StatusPending, Next: now.Add(30 * time.Second),
			Error: "The authorization could not be checked; trying again."}, now)
	}
	if why := domain.GrantDenies(g, ep.RestaurantID, j.Event.Type, now); why != "" {
		return w.Repo.Finish(ctx, j, domain.Outcome{Status: domain.StatusBlocked, Error: why}, now)
	}
	a := w.send(ctx, j, now)
	o := domain.Judge(j, a, w.now(), w.rnd())
	return w.Repo.Finish(ctx, j, o, w.now())
}

// send posts the signed event and reports what happened.
func (w *Worker) send(ctx context.Context, j domain.Job, now time.Time) domain.Attempt {
	body, err := json.Marshal(j.Event.Envelope())
	if err != nil {
		return domain.Attempt{Err: "The event could not be encoded."}
	}
	ctx, cancel := context.WithTimeout(ctx, domain.DeliveryTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.Endpoint.URL, bytes.NewReader(body))
	if err != nil {
		return domain.Attempt{Err: "The endpoint URL cannot be requested."}
	}
	var keys [][]byte
	for _, s := range j.Endpoint.Secrets(now) {
		if k, err := webhooksig.Key(s); err == nil {
			keys = append(keys, k)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "partnerapi-webhooks/1")
	webhooksig.SetHeaders(req.Header, keys, j.Event.ID, now, body)
	start := time.Now()
	resp, err := w.Client.Do(req)
	latency := time.Since(start)
	if err != nil {
		return domain.Attempt{Err: "The endpoint could not be reached: " + err.Error(), Latency: latency}
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return domain.Attempt{Code: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After"), Latency: latency}
}
