package api_test

import (
	"context"
	"testing"

	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/servicetest"
	"partnerapi.dev/services/orders/migrations"
)

// With a streaming replica, search and details are read from it once it
// has replayed what the primary had committed; an order ingested while its
// replay is paused is found all the same (read from the primary).
func TestReplicaReadsSeeCommittedOrders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnvOn(t, servicetest.ReplicaDatabase(t, database.MigrateURL("orders", migrations.FS, migrations.Go(migrations.DefaultPartitions)...)))
	found := func(id string) bool {
		return len(e.page(base+"?order_id="+id, helsinki).ids()) == 1
	}
	e.ingest(order(helsinki, "before", hel(2026, 3, 10, 12, 0)))
	servicetest.CaughtUp(t, e.reads)
	if !found("before") {
		t.Fatal("the replica does not find an order it replayed")
	}

	servicetest.PauseReplay(t, e.reads)
	e.ingest(order(helsinki, "during", hel(2026, 3, 10, 13, 0)))
	if !found("during") {
		t.Fatal("an order ingested while the replica's replay is paused is not found")
	}
	if a := e.details(base+"/during", helsinki); a.Status != 200 {
		t.Fatalf("details while the replica lags: %d", a.Status)
	}
	if e.reads.DB(ctx) == e.reads.Replica() {
		t.Fatal("a lagging replica served a read")
	}
	servicetest.ResumeReplay(t, e.reads)
	if !found("during") {
		t.Fatal("the replica does not find the order once it replayed it")
	}
}
