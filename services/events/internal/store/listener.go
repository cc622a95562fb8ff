package store

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Listener turns the appends' NOTIFY into wake-ups of the long polls waiting
// in this process. It holds one connection of its own with pgx: LISTEN needs
// a session that waits for notifications, which neither gorm nor
// database/sql offers.
type Listener struct {
	URL string

	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
	any  chan struct{}
}

// Appended returns a channel that receives after appends to any restaurant
// (one wake-up for several appends that arrive together): the webhook
// worker waits on it, so a delivery queued by an append is sent at once
// instead of at the worker's next poll.
func (l *Listener) Appended() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.any == nil {
		l.any = make(chan struct{}, 1)
	}
	return l.any
}

// Subscribe implements domain.Notifier.
func (l *Listener) Subscribe(restaurantID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	l.mu.Lock()
	if l.subs == nil {
		l.subs = map[string]map[chan struct{}]struct{}{}
	}
	if l.subs[restaurantID] == nil {
		l.subs[restaurantID] = map[chan struct{}]struct{}{}
	}
	l.subs[restaurantID][ch] = struct{}{}
	l.mu.Unlock()
	return ch, func() {
		l.mu.Lock()
		delete(l.subs[restaurantID], ch)
		if len(l.subs[restaurantID]) == 0 {
			delete(l.subs, restaurantID)
		}
		l.mu.Unlock()
	}
}

func (l *Listener) wake(restaurantID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.any != nil {
		select {
		case l.any <- struct{}{}:
		default: // already woken
		}
	}
	for ch := range l.subs[restaurantID] {
		select {
		case ch <- struct{}{}:
		default: // already woken
		}
	}
}

// Run listens until ctx ends, reconnecting after a failure; meanwhile the
// polls' short fallback keeps them answering.
func (l *Listener) Run(ctx context.Context) {
	for ctx.Err() == nil {
		if err := l.listen(ctx); err != nil && ctx.Err() == nil {
			slog.Warn("events listener reconnecting", "error", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

func (l *Listener) listen(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, l.URL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `LISTEN `+Channel); err != nil {
		return err
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		l.wake(n.Payload)
	}
}
