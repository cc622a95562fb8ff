package store

import (
	"context"
	"time"

	"gorm.io/gorm"
)

// SigningKeyRow is one token signing key as stored; PrivateEnc is sealed.
type SigningKeyRow struct {
	Kid        string
	Alg        string
	PublicJWK  []byte `gorm:"column:public_jwk"`
	PrivateEnc []byte
	Status     string
	CreatedAt  time.Time
	NotAfter   *time.Time
}

// SigningKeys lists the active key and the retiring keys still published.
func (s *Store) SigningKeys(ctx context.Context) ([]SigningKeyRow, error) {
	var rows []SigningKeyRow
	err := s.conn(ctx).Raw(`SELECT kid, alg, public_jwk, private_enc, status, created_at, not_after FROM signing_keys
		WHERE status = 'active' OR not_after > ? ORDER BY status = 'active' DESC, created_at DESC`, s.now()).Scan(&rows).Error
	return rows, err
}

// AddSigningKey makes k the active key; the previous active key retires and
// stays published until retireAfter from now (the life of its tokens).
// With onlyIfNone it does nothing when an active key exists (start-up).
func (s *Store) AddSigningKey(ctx context.Context, k SigningKeyRow, retireAfter time.Duration, onlyIfNone bool) (bool, error) {
	added := false
	err := s.inTx(ctx, func(ctx context.Context, tx *gorm.DB) error {
		// Serialise rotations across replicas.
		if err := tx.Exec(`LOCK TABLE signing_keys IN SHARE ROW EXCLUSIVE MODE`).Error; err != nil {
			return err
		}
		if onlyIfNone {
			var n int
			if err := tx.Raw(`SELECT count(*) FROM signing_keys WHERE status = 'active'`).Scan(&n).Error; err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
		}
		if err := tx.Exec(`UPDATE signing_keys SET status = 'retiring', not_after = ? WHERE status = 'active'`, s.now().Add(retireAfter)).Error; err != nil {
			return err
		}
		added = true
		return tx.Exec(`INSERT INTO signing_keys (kid, alg, public_jwk, private_enc, status, created_at) VALUES (?, ?, ?, ?, 'active', ?)`,
			k.Kid, k.Alg, string(k.PublicJWK), k.PrivateEnc, s.now()).Error
	})
	return added, err
}
