package api_test

import (
	"context"
	"testing"

	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/servicetest"
	"partnerapi.dev/services/accounting/internal/domain"
	"partnerapi.dev/services/accounting/migrations"
)

// With a streaming replica, reports are read from it, and a partner who
// applies a correction and then reads the report sees the correction even
// while the replica's replay is paused (the read waits for the replica,
// then reads from the primary).
func TestReplicaReadsSeeTheirWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := servicetest.ReplicaDatabase(t, database.MigrateURL("accounting", migrations.FS, migrations.Go()...))
	cfg.MaxOpenConns = 20
	e := newEnvOn(t, cfg)
	correctionDay(e)
	path := reportPath(helsinki, "day", "2026-07-01", "2026-07-01")
	applied := func() int {
		return len(mustGet[report](e, path, helsinki).AppliedCorrectionIDs)
	}
	servicetest.CaughtUp(t, e.reads)
	if n := applied(); n != 0 {
		t.Fatalf("before: %d corrections", n)
	}

	// The replica stops replaying; a correction is written on the primary.
	servicetest.PauseReplay(t, e.reads)
	pv := mustPost[preview](e, base(helsinki)+"/payment-corrections/preview", helsinki, previewBody("correct", "cash"))
	mustPost[result](e, base(helsinki)+"/payment-corrections/apply", helsinki, writeBody(pv, domain.NewID()))
	var onReplica int
	if err := e.reads.Replica().Gorm.Raw(`SELECT count(*) FROM correction_ledger`).Scan(&onReplica).Error; err != nil || onReplica != 0 {
		t.Fatalf("the paused replica has %d ledger rows (%v)", onReplica, err)
	}
	if n := applied(); n != 1 {
		t.Fatalf("the report after the apply shows %d corrections", n)
	}
	if e.reads.DB(ctx) == e.reads.Replica() {
		t.Fatal("a lagging replica served a read")
	}

	// Replay again: reads go back to the replica, with the correction.
	servicetest.ResumeReplay(t, e.reads)
	if n := applied(); n != 1 {
		t.Fatalf("from the replica: %d corrections", n)
	}
}
