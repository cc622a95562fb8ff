package api_test

import (
	"context"
	"testing"

	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/servicetest"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/events/migrations"
)

// With a streaming replica, the feed is read from it once it has replayed
// what the primary had committed; an event appended while its replay is
// paused is in the feed all the same (read from the primary).
func TestReplicaFeedSeesCommittedEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnvOn(t, servicetest.ReplicaDatabase(t, database.MigrateURL("events", migrations.FS, migrations.Go()...)))
	reads := e.store.Reads
	head := func() int64 {
		r, page := e.feed("/v1/restaurants/"+restA+"/events", allScopes)
		if r.status != 200 {
			t.Fatalf("feed: %d %s", r.status, r.body)
		}
		return page.HeadSeq
	}
	e.appendOK(ev(restA, contracts.EventOrderCreated))
	servicetest.CaughtUp(t, reads)
	if h := head(); h != 1 {
		t.Fatalf("from the replica: head %d", h)
	}
	servicetest.PauseReplay(t, reads)
	e.appendOK(ev(restA, contracts.EventOrderCreated))
	if h := head(); h != 2 {
		t.Fatalf("with the replica's replay paused: head %d", h)
	}
	if reads.DB(ctx) == reads.Replica() {
		t.Fatal("a lagging replica served a read")
	}
	servicetest.ResumeReplay(t, reads)
	if h := head(); h != 2 {
		t.Fatalf("from the replica after replay: head %d", h)
	}
}
