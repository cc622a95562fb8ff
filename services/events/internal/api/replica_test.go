package api_test

import (
	"context"
	"testing"
	"time"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/events/migrations"
)

// With a streaming replica, the feed is read from it once it has replayed
// what the primary had committed; an event appended while its replay is
// paused is in the feed all the same (read from the primary).
func TestReplicaFeedSeesCommittedEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	primary, replica := testenv.PostgresWithReplica(t)
	if err := database.MigrateURL("events", migrations.FS, migrations.Go()...)(ctx, primary); err != nil {
		t.Fatal(err)
	}
	e := newEnvOn(t, database.Config{URL: config.Secret(primary), ReadURL: config.Secret(replica), ReadWait: 50 * time.Millisecond})
	reads := e.store.Reads
	head := func() int64 {
		r, page := e.feed("/v1/restaurants/"+restA+"/events", allScopes)
		if r.status != 200 {
			t.Fatalf("feed: %d %s", r.status, r.body)
		}
		return page.HeadSeq
	}
	e.appendOK(ev(restA, contracts.EventOrderCreated))
	if err := reads.WaitReplica(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if h := head(); h != 1 {
		t.Fatalf("from the replica: head %d", h)
	}
	if err := reads.Replica().Gorm.Exec(`SELECT pg_wal_replay_pause()`).Error; err != nil {
		t.Fatal(err)
	}
	e.appendOK(ev(restA, contracts.EventOrderCreated))
	if h := head(); h != 2 {
		t.Fatalf("with the replica's replay paused: head %d", h)
	}
	if reads.DB(ctx) == reads.Replica() {
		t.Fatal("a lagging replica served a read")
	}
	if err := reads.Replica().Gorm.Exec(`SELECT pg_wal_replay_resume()`).Error; err != nil {
		t.Fatal(err)
	}
	if err := reads.WaitReplica(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if h := head(); h != 2 {
		t.Fatalf("from the replica after replay: head %d", h)
	}
}
