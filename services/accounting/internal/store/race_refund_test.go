package store_test

import (
	"context"
	"testing"
	"time"
)

// Two ingestions of the same new refund in refund-only batches (a retried
// POST while the first still runs): the second reads which refunds are new
// after the first commits, so refund_event.recorded is recorded once.
func TestConcurrentIngestionsRecordANewRefundOnce(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	// The first ingestion is held after its insert, before its event, by
	// a lock on the outbox.
	hold := st.DB.Begin()
	if err := hold.Exec(`LOCK TABLE outbox_events IN EXCLUSIVE MODE`).Error; err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	go func() { errs <- st.Ingest(ctx, parse(t, refundLine("r1", 100))) }()
	time.Sleep(500 * time.Millisecond) // the first inserted r1 and waits on the outbox
	go func() { errs <- st.Ingest(ctx, parse(t, refundLine("r1", 100))) }()
	time.Sleep(500 * time.Millisecond) // the second waits on the restaurant (without that lock: reads r1 as new)
	hold.Rollback()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := st.DB.Raw(`SELECT count(*) FROM outbox_events WHERE type = 'refund_event.recorded'`).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("refund_event.recorded for one new refund ingested twice at once: %d events, want 1", n)
	}
}
