package store_test

import (
	"context"
	"errors"
	"testing"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/catalogimport/internal/domain"
	"partnerapi.dev/services/catalogimport/internal/store"
	"partnerapi.dev/services/catalogimport/migrations"
	"partnerapi.dev/services/contracts"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func open(t *testing.T) *store.Store {
	t.Helper()
	url := testenv.NewDatabase(t, "catalogimport", database.MigrateURL("catalogimport", migrations.FS, migrations.Go()...))
	db, err := database.Open(context.Background(), database.Config{URL: config.Secret(url)}, "catalogimport")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(context.Background()) })
	return &store.Store{DB: db.Gorm}
}

const restaurant = "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a01"

func key(body string) domain.ApplyKey {
	return domain.ApplyKey{Scope: "c/" + restaurant + "/catalog-import-apply", Key: "5d8f0a6e-2b1c-4c3d-9e8f-0a1b2c3d4e5f",
		Body: map[string]string{"b": body}, ClientID: "c", UserID: "u", RestaurantID: restaurant,
		BatchID: domain.BatchID("c", restaurant, "5d8f0a6e-2b1c-4c3d-9e8f-0a1b2c3d4e5f")}
}

func imported(k domain.ApplyKey) domain.AppliedImport {
	return domain.AppliedImport{
		Applied: domain.Applied{ActionID: k.BatchID, RestaurantID: restaurant,
			Menu: contracts.MenuSummary{MenuID: "6a0c0e2e-0000-4000-8000-000000000001", Name: "Draft"},
			IDs:  map[string]map[string]string{"menu": {"m": "6a0c0e2e-0000-4000-8000-000000000001"}}},
		Outcome: domain.Created, PlanHash: "0000000000000000000000000000000000000000000000000000000000000000", Mode: contracts.CatalogTargetNewDraft,
	}
}

// The pending batch of a key survives a failed apply, belongs to its body,
// and goes away with the record.
func TestPendingBatchAndRecord(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	k := key("one")
	if b, err := s.PendingBatch(ctx, k); b != nil || err != nil {
		t.Fatalf("no pending batch yet: %v %v", b, err)
	}
	batch := contracts.CatalogBatch{BatchID: k.BatchID, Target: contracts.CatalogBatchTarget{Mode: contracts.CatalogTargetNewDraft}}
	outage := errors.New("menus unreachable")
	_, err := s.Apply(ctx, k, func(ctx context.Context) (domain.AppliedImport, error) {
		if err := s.SavePending(ctx, k, batch); err != nil {
			return domain.AppliedImport{}, err
		}
		return domain.AppliedImport{}, outage
	})
	if !errors.Is(err, outage) {
		t.Fatal(err)
	}
	if b, err := s.PendingBatch(ctx, k); err != nil || b == nil || b.BatchID != k.BatchID {
		t.Fatalf("pending batch after a failed apply: %v %v", b, err)
	}
	if _, err := s.PendingBatch(ctx, key("two")); !errors.Is(err, domain.ErrKeyReused) {
		t.Fatalf("pending batch of another body: %v", err)
	}
	first, err := s.Apply(ctx, k, func(context.Context) (domain.AppliedImport, error) { return imported(k), nil })
	if err != nil || first.Outcome != domain.Created || first.Replayed {
		t.Fatalf("apply: %+v %v", first, err)
	}
	if b, err := s.PendingBatch(ctx, k); b != nil || err != nil {
		t.Fatalf("pending batch after the record: %v %v", b, err)
	}
	again, err := s.Apply(ctx, k, func(context.Context) (domain.AppliedImport, error) {
		t.Fatal("a replay must not write")
		return domain.AppliedImport{}, nil
	})
	if err != nil || !again.Replayed || again.Outcome != domain.Created {
		t.Fatalf("replay: %+v %v", again, err)
	}
	if _, err := s.Apply(ctx, key("two"), func(context.Context) (domain.AppliedImport, error) { return imported(k), nil }); !errors.Is(err, domain.ErrKeyReused) {
		t.Fatalf("same key, other body: %v", err)
	}
	rec, err := s.AppliedImports(ctx, restaurant)
	if err != nil || len(rec) != 1 || rec[0].UserID != "u" || rec[0].ClientID != "c" || rec[0].ActionID != k.BatchID {
		t.Fatalf("records %+v %v", rec, err)
	}
	if err := s.DropPending(ctx, k.BatchID); err != nil {
		t.Fatal(err)
	}
}
