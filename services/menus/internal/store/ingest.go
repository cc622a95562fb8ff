package store

import (
	"context"

	"partnerapi.dev/pkg/fault"
	"partnerapi.dev/services/menus/internal/domain"
)

// Ingest stores one restaurant's catalog and menus as given.
func (s *Store) Ingest(ctx context.Context, c domain.Snapshot) error {
	return fault.New(fault.CapabilityDisabled, "catalog ingestion is not available yet")
}
