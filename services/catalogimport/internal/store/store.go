// Package store keeps the catalogimport schema: the idempotency keys of apply
// requests (pkg/idempotency), the applied imports recorded with them in one
// transaction, and the batches sent to the menus service whose outcome is
// not yet recorded.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"gorm.io/gorm"

	"partnerapi.dev/pkg/idempotency"
	"partnerapi.dev/pkg/outbox"
	"partnerapi.dev/services/catalogimport/internal/domain"
	"partnerapi.dev/services/contracts"
)

// Store implements domain.Repository on gorm.
type Store struct {
	DB *gorm.DB
}

var _ domain.Repository = (*Store)(nil)

// appliedImport is a row of applied_imports.
type appliedImport struct {
	ActionID       string `gorm:"primaryKey"`
	RestaurantID   string
	ClientID       string
	UserID         string
	IdempotencyKey string
	PlanHash       string
	TargetMode     string
	MenuID         string
	Created        []byte `gorm:"type:jsonb"`
	IDs            []byte `gorm:"column:ids;type:jsonb"`
	AppliedAt      time.Time
}

func (appliedImport) TableName() string { return "applied_imports" }

// pendingBatch is a row of pending_batches.
type pendingBatch struct {
	BatchID     string `gorm:"primaryKey"`
	RequestHash string
	Batch       []byte `gorm:"type:jsonb"`
}

func (pendingBatch) TableName() string { return "pending_batches" }

// Apply runs write under the idempotency key and records its import, and
// the event the import carries, in the same transaction.
func (s *Store) Apply(ctx context.Context, k domain.ApplyKey, write func(ctx context.Context) (domain.AppliedImport, error)) (domain.Stored, error) {
	res, err := idempotency.Run(ctx, s.DB, idempotency.Request{Scope: k.Scope, Key: k.Key, Body: k.Body}, func(tx *gorm.DB) (int, any, error) {
		imp, err := write(ctx)
		if err != nil {
			return 0, nil, err
		}
		created, err := json.Marshal(imp.Applied.Created)
		if err != nil {
			return 0, nil, err
		}
		ids, err := json.Marshal(imp.Applied.IDs)
		if err != nil {
			return 0, nil, err
		}
		row := appliedImport{
			ActionID: imp.Applied.ActionID, RestaurantID: k.RestaurantID, ClientID: k.ClientID, UserID: k.UserID,
			IdempotencyKey: k.Key, PlanHash: imp.PlanHash, TargetMode: imp.Mode, MenuID: imp.Applied.Menu.MenuID,
			Created: created, IDs: ids, AppliedAt: time.Now().UTC(),
		}
		if err := tx.Create(&row).Error; err != nil {
			return 0, nil, err
		}
		if err := tx.Delete(&pendingBatch{}, "batch_id = ?", k.BatchID).Error; err != nil {
			return 0, nil, err
		}
		if err := outbox.Record(tx, outbox.Event{Type: imp.Event.Type, RestaurantID: imp.Event.RestaurantID, Data: imp.Event.Data}); err != nil {
			return 0, nil, err
		}
		return int(imp.Outcome), imp.Applied, nil
	})
	if errors.Is(err, idempotency.ErrKeyReused) {
		return domain.Stored{}, domain.ErrKeyReused
	}
	if err != nil {
		return domain.Stored{}, err
	}
	return domain.Stored{Outcome: domain.Outcome(res.Status), Data: res.Data, Replayed: res.Replayed}, nil
}

// PendingBatch reads the batch sent for k whose outcome is unrecorded.
func (s *Store) PendingBatch(ctx context.Context, k domain.ApplyKey) (*contracts.CatalogBatch, error) {
	var rows []pendingBatch
	if err := s.DB.WithContext(ctx).Where("batch_id = ?", k.BatchID).Limit(1).Find(&rows).Error; err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	hash, err := idempotency.Hash(k.Body)
	if err != nil {
		return nil, err
	}
	if rows[0].RequestHash != hash {
		return nil, domain.ErrKeyReused
	}
	var b contracts.CatalogBatch
	if err := json.Unmarshal(rows[0].Batch, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// SavePending commits b before it is sent, outside the apply's transaction,
// so it survives this process stopping before that transaction commits.
func (s *Store) SavePending(ctx context.Context, k domain.ApplyKey, b contracts.CatalogBatch) error {
	hash, err := idempotency.Hash(k.Body)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(b)
	if err != nil {
		return err
	}
	return s.DB.WithContext(ctx).Create(&pendingBatch{BatchID: b.BatchID, RequestHash: hash, Batch: raw}).Error
}

// DropPending forgets a batch the menus service refused.
func (s *Store) DropPending(ctx context.Context, batchID string) error {
	return s.DB.WithContext(ctx).Delete(&pendingBatch{}, "batch_id = ?", batchID).Error
}

// AppliedImport is one recorded import, for tests and operators.
type AppliedImport struct {
	ActionID, RestaurantID, ClientID, UserID, IdempotencyKey, PlanHash, TargetMode, MenuID string
	AppliedAt                                                                              time.Time
}

// AppliedImports lists the imports recorded for a restaurant, oldest first.
func (s *Store) AppliedImports(ctx context.Context, restaurantID string) ([]AppliedImport, error) {
	var rows []appliedImport
	if err := s.DB.WithContext(ctx).Where("restaurant_id = ?", restaurantID).Order("applied_at, action_id").Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]AppliedImport, len(rows))
	for i, r := range rows {
		out[i] = AppliedImport{r.ActionID, r.RestaurantID, r.ClientID, r.UserID, r.IdempotencyKey, r.PlanHash, r.TargetMode, r.MenuID, r.AppliedAt}
	}
	return out, nil
}
