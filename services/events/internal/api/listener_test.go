package api_test

import (
	"testing"
	"time"

	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/events/internal/store"
)

// The listener wakes a subscriber on a commit made through another
// connection (as another replica's would be), and not on a rollback.
func TestListenerWakesOnCommittedAppendsOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	l := &store.Listener{URL: e.dsn}
	ctx := t.Context()
	go l.Run(ctx)
	wake, stop := l.Subscribe(restA)
	defer stop()
	// The listener connects asynchronously: append until it hears one.
	deadline := time.After(20 * time.Second)
	for heard := false; !heard; {
		e.appendOK(ev(restA, contracts.EventOrderCreated))
		select {
		case <-wake:
			heard = true
		case <-time.After(200 * time.Millisecond):
		case <-deadline:
			t.Fatal("no notification of a committed append")
		}
	}
	// Notifications arrive in commit order: once restB's has, every one of
	// restA's before it has too.
	other, stopB := l.Subscribe(restB)
	defer stopB()
	e.appendOK(ev(restB, contracts.EventOrderUpdated))
	<-other
	select {
	case <-wake:
	default:
	}
	tx := e.db.Gorm.Begin()
	if _, err := store.AppendTx(tx, e.now(), "orders", []contracts.EventRecord{ev(restA, contracts.EventOrderUpdated)}); err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	e.appendOK(ev(restB, contracts.EventOrderUpdated))
	<-other
	select {
	case <-wake:
		t.Fatal("woken by a rolled-back append")
	default:
	}
}

// Appended receives after an append to any restaurant, so the webhook
// worker, waiting on it with an hour-long poll, sends a delivery queued by
// an append without waiting for its poll.
func TestWorkerWakesOnAppends(t *testing.T) {
	p := newPipeline(t, true, time.Hour)
	// The listener connects asynchronously: the first write may be missed
	// by it (and wait for the poll), so write until one is delivered.
	deadline := time.After(20 * time.Second)
	for {
		select {
		case <-p.writeAsync():
			return
		case <-time.After(2 * time.Second):
		case <-deadline:
			t.Fatal("no delivery without the worker's poll")
		}
	}
}
