package delivery

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"partnerapi.dev/pkg/webhooksig"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/events/internal/domain"
)

// GrantSource answers a grant's current state (nil: unknown to identity).
type GrantSource interface {
	Get(ctx context.Context, grantID, clientID string) (*contracts.Grant, error)
}

// Worker sends due deliveries. Each delivery is sent as soon as a slot is
// free, never waiting for others claimed with it, and at most PerEndpoint
// of one endpoint's are in flight at once: an endpoint that hangs until
// the timeout holds that many of the Parallel slots, and the others keep
// serving every other endpoint.
type Worker struct {
	Repo   domain.WebhookRepository
	Grants GrantSource
	Client *http.Client
	// Now is the clock (time.Now when nil); Rand the jitter source
	// (domain.Jitter when nil). Tests set both.
	Now  func() time.Time
	Rand func() float64
	// Parallel is how many deliveries are sent at once; PerEndpoint how
	// many of them may go to one endpoint (domain.DefaultPerEndpoint when
	// 0, at most Parallel).
	Parallel    int
	PerEndpoint int
	// NamingSet is the deployment's menu naming set (domain.NamingA when
	// empty): menu event bodies use its names.
	NamingSet string
	// Wake, when set, ends a wait between polls early: it receives after
	// appends, which may have queued deliveries due now.
	Wake <-chan struct{}

	mu       sync.Mutex
	inFlight map[string]int // by endpoint
	running  int
	freed    chan struct{}
}

var tracer = otel.Tracer("partnerapi.dev/services/events/delivery")

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

// claim leases as many due deliveries as there are free slots, within each
// endpoint's room, and counts them in flight.
func (w *Worker) claim(ctx context.Context) ([]domain.Job, error) {
	par := max(w.Parallel, 1)
	per := min(par, w.PerEndpoint)
	if per < 1 {
		per = min(par, domain.DefaultPerEndpoint)
	}
	w.mu.Lock()
	if w.inFlight == nil {
		w.inFlight, w.freed = map[string]int{}, make(chan struct{}, 1)
	}
	l := domain.ClaimLimits{N: par - w.running, PerEndpoint: per, InFlight: maps.Clone(w.inFlight)}
	w.mu.Unlock()
	if l.N < 1 {
		return nil, nil
	}
	jobs, err := w.Repo.Claim(ctx, w.now(), lease, l)
	w.mu.Lock()
	for _, j := range jobs {
		w.inFlight[j.EndpointID]++
		w.running++
	}
	w.mu.Unlock()
	return jobs, err
}

// start sends j in its own goroutine and frees its slot when done.
func (w *Worker) start(ctx context.Context, j domain.Job, wg *sync.WaitGroup, failed func(error)) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Only a delivery is traced (an idle claim records nothing), each as
		// a trace of its own.
		ctx, span := tracer.Start(ctx, "webhook delivery", trace.WithAttributes(attribute.String("webhook.endpoint_id", j.EndpointID)))
		err := w.deliver(ctx, j)
		span.End()
		w.mu.Lock()
		if w.inFlight[j.EndpointID]--; w.inFlight[j.EndpointID] <= 0 {
			delete(w.inFlight, j.EndpointID)
		}
		w.running--
		w.mu.Unlock()
		select {
		case w.freed <- struct{}{}:
		default:
		}
		if err != nil {
			failed(err)
		}
	}()
}

func (w *Worker) idle() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running == 0
}

// Run sends due deliveries until ctx ends: it claims again whenever a slot
// frees, at once when Wake receives, and every poll otherwise.
func (w *Worker) Run(ctx context.Context, poll time.Duration) {
	var wg sync.WaitGroup
	defer wg.Wait()
	logErr := func(err error) {
		if ctx.Err() == nil {
			slog.Error("webhook delivery failed", "error", err)
		}
	}
	for ctx.Err() == nil {
		jobs, err := w.claim(ctx)
		if err != nil {
			logErr(err)
		}
		for _, j := range jobs {
			w.start(ctx, j, &wg, logErr)
		}
		if len(jobs) > 0 && err == nil {
			continue
		}
		select {
		case <-ctx.Done():
		case <-w.Wake:
		case <-w.freed:
		case <-time.After(poll):
		}
	}
}

// RunOnce sends what is due now, as Run does, until nothing more is due
// and nothing is in flight; it answers how many deliveries it took.
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	failed := func(err error) {
		mu.Lock()
		firstErr = cmp.Or(firstErr, err)
		mu.Unlock()
	}
	total := 0
	for {
		jobs, err := w.claim(ctx)
		if err != nil {
			failed(err)
			break
		}
		for _, j := range jobs {
			w.start(ctx, j, &wg, failed)
		}
		total += len(jobs)
		if len(jobs) > 0 {
			continue
		}
		if w.idle() {
			break
		}
		<-w.freed
	}
	wg.Wait()
	return total, firstErr
}

// deliver makes one attempt of j and records it. The attempt runs holding
// the endpoint as it is now, not as it was claimed: a change (URL, disable,
// rotation, delete) answered before the attempt starts is obeyed, and one
// made while it is in flight waits until its outcome is recorded before it
// is answered.
func (w *Worker) deliver(ctx context.Context, j domain.Job) error {
	var outcome string
	err := w.Repo.Attempt(ctx, j, func(ep domain.Endpoint, found bool) domain.Outcome {
		j.Endpoint = ep
		o := w.attempt(ctx, j, found)
		o.At = w.now()
		outcome = o.Status
		return o
	})
	if err == nil && outcome != "" {
		attempts.Add(ctx, 1, metric.WithAttributes(attribute.String("endpoint", j.EndpointID), attribute.String("outcome", outcome)))
	}
	return err
}

// attempts counts delivery attempts by endpoint and outcome (succeeded;
// pending: to be tried again; failed; blocked): an endpoint's failures show
// as its pending and failed counts growing.
var attempts, _ = otel.Meter("partnerapi.dev/services/events/delivery").Int64Counter("webhook.delivery.attempts",
	metric.WithDescription("Webhook delivery attempts by endpoint id and outcome."))

// ObserveBacklog exports, at each collection, the deliveries waiting per
// endpoint and how long the oldest due one has waited (read by backlog).
func ObserveBacklog(backlog func(context.Context) ([]domain.Backlog, error)) error {
	m := otel.Meter("partnerapi.dev/services/events/delivery")
	waiting, err := m.Int64ObservableGauge("webhook.deliveries.waiting",
		metric.WithDescription("Deliveries waiting to be sent, by endpoint id."))
	if err != nil {
		return err
	}
	due, err := m.Float64ObservableGauge("webhook.deliveries.oldest_due_seconds",
		metric.WithDescription("How long the longest-due waiting delivery has been due, by endpoint id."))
	if err != nil {
		return err
	}
	_, err = m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		rows, err := backlog(ctx)
		if err != nil {
			return err
		}
		for _, b := range rows {
			at := metric.WithAttributes(attribute.String("endpoint", b.EndpointID))
			o.ObserveInt64(waiting, b.Waiting, at)
			o.ObserveFloat64(due, b.OldestDue.Seconds(), at)
		}
		return nil
	}, waiting, due)
	return err
}

// attempt checks the endpoint and the grant, then sends j.
func (w *Worker) attempt(ctx context.Context, j domain.Job, found bool) domain.Outcome {
	now := w.now()
	ep := j.Endpoint
	switch {
	case !found:
		return domain.Outcome{Status: domain.StatusFailed, Error: "The endpoint was deleted."}
	case ep.Disabled:
		return domain.Outcome{Status: domain.StatusFailed, Error: "The endpoint is disabled."}
	case j.Event.Data == nil:
		return domain.Outcome{Status: domain.StatusFailed, Error: "The event is past the retention and no longer kept."}
	}
	if why, handled := domain.RevocationDenies(ep, j.Event); handled {
		if why != "" {
			return domain.Outcome{Status: domain.StatusBlocked, Error: why}
		}
		return domain.Judge(j, w.send(ctx, j, now), w.now(), w.rnd())
	}
	g, err := w.Grants.Get(ctx, ep.GrantID, ep.ClientID)
	if err != nil {
		// Identity could not answer: try again shortly, not counted as an
		// attempt nor as the endpoint's failure.
		return domain.Outcome{Status: domain.StatusPending, Next: now.Add(30 * time.Second),
			Error: "The authorization could not be checked; trying again."}
	}
	if why := domain.GrantDenies(g, ep.RestaurantID, j.Event.Type, now); why != "" {
		return domain.Outcome{Status: domain.StatusBlocked, Error: why}
	}
	a := w.send(ctx, j, now)
	return domain.Judge(j, a, w.now(), w.rnd())
}

// send posts the signed event and reports what happened.
func (w *Worker) send(ctx context.Context, j domain.Job, now time.Time) domain.Attempt {
	body, err := json.Marshal(j.Event.Envelope(w.NamingSet))
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
		return domain.Attempt{Err: transportError(err), Latency: latency}
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return domain.Attempt{Code: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After"), Latency: latency}
}
