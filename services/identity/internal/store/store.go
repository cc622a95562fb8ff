// Package store keeps the identity schema in Postgres through gorm: the
// directory, partner clients, grants, fosite's token storage and signing
// keys. SQL lives only here.
package store

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"partnerapi.dev/services/identity/internal/domain"
)

// Store is the identity schema.
type Store struct {
	db  *gorm.DB
	now func() time.Time
	// NewSession returns an empty fosite session, used when fosite asks to
	// load a request without giving one to hydrate.
	NewSession func() any
}

var _ domain.Repository = (*Store)(nil)

// New wraps an open gorm connection whose search_path is the identity schema.
func New(db *gorm.DB) *Store {
	return &Store{db: db, now: time.Now}
}

// SetClock replaces the clock (tests).
func (s *Store) SetClock(now func() time.Time) { s.now = now }

type txKey struct{}

// conn returns the transaction carried by ctx, or the pool.
func (s *Store) conn(ctx context.Context) *gorm.DB {
	if tx, ok := ctx.Value(txKey{}).(*gorm.DB); ok {
		return tx
	}
	return s.db.WithContext(ctx)
}

// inTx runs fn in a transaction (joining one already in ctx).
func (s *Store) inTx(ctx context.Context, fn func(ctx context.Context, tx *gorm.DB) error) error {
	if tx, ok := ctx.Value(txKey{}).(*gorm.DB); ok {
		return fn(ctx, tx)
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return fn(context.WithValue(ctx, txKey{}, tx), tx)
	})
}

// jsonList is a jsonb array of strings.
type jsonList []string

func (l jsonList) Value() (driver.Value, error) {
	if l == nil {
		l = jsonList{}
	}
	b, err := json.Marshal([]string(l))
	return string(b), err
}

func (l *jsonList) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case nil:
		*l = nil
		return nil
	case []byte:
		b = v
	case string:
		b = []byte(v)
	default:
		return fmt.Errorf("jsonList: cannot scan %T", src)
	}
	var out []string
	if err := json.Unmarshal(b, &out); err != nil {
		return err
	}
	*l = out
	return nil
}

func notFound(err error) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return domain.ErrNotFound
	}
	return err
}
