// Package idempotency makes a write safe to repeat: the key, a hash of the
// canonical request and the response are recorded in the service's own schema
// in the same transaction as the write. A repeat with the same body gets the
// stored response marked replayed; a repeat with another body is a conflict;
// concurrent duplicates produce exactly one write.
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
	"gorm.io/gorm"

	"partnerapi.dev/pkg/lifecycle"
)

// Retention is how long keys are kept at least.
const Retention = 24 * time.Hour

// ErrKeyReused means the key was used before with a different request body.
var ErrKeyReused = errors.New("this idempotency key was already used with a different request body")

// Migration creates the key table; a service adds it to its migrations at the
// version it chooses.
func Migration(version int64) *goose.Migration {
	return goose.NewGoMigration(version,
		&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `
CREATE TABLE idempotency_keys (
    scope        text        NOT NULL,
    key          text        NOT NULL,
    request_hash text        NOT NULL,
    status       integer     NOT NULL,
    response     jsonb       NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);`)
			return err
		}},
		&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `DROP TABLE idempotency_keys`)
			return err
		}},
	)
}

// Request identifies one write.
type Request struct {
	// Scope keeps keys of different callers and operations apart, e.g.
	// "<client>/<tenant>/create-menu".
	Scope string
	// Key is the caller's idempotency key.
	Key string
	// Body is the request as decoded; its canonical JSON is hashed.
	Body any
}

// Result is the answer to send.
type Result struct {
	Status   int
	Data     json.RawMessage
	Replayed bool
}

// WriteFunc performs the write inside tx and returns the status and the data
// object to answer; it should set a "replayed": false field, which replays flip.
type WriteFunc func(tx *gorm.DB) (status int, data any, err error)

// NormalizeKey returns an idempotency key in its one spelling: keys are
// UUIDs (8-4-4-4-12 hexadecimal digits), compared without regard to case,
// so the canonical spelling is lower case. ok is false when key is not a
// UUID.
func NormalizeKey(key string) (normalized string, ok bool) {
	if len(key) != 36 {
		return "", false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return "", false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		default:
			return "", false
		}
	}
	return strings.ToLower(key), true
}

// ValidKey reports whether key is an idempotency key (a UUID, any case).
func ValidKey(key string) bool {
	_, ok := NormalizeKey(key)
	return ok
}

// KeyField is the body field that carries the idempotency key.
const KeyField = "idempotencyKey"

// Run performs write once per (scope, key), the key taken in its
// normalized spelling. An error from write rolls back everything, key
// record included, so the caller may retry with the same key.
func Run(ctx context.Context, db *gorm.DB, req Request, write WriteFunc) (Result, error) {
	if k, ok := NormalizeKey(req.Key); ok {
		req.Key = k
	}
	hash, err := Hash(req.Body)
	if err != nil {
		return Result{}, err
	}
	var res Result
	err = db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// A concurrent duplicate blocks here until the first commits or rolls back.
		ins := tx.Exec(`INSERT INTO idempotency_keys (scope, key, request_hash, status, response)
VALUES (?, ?, ?, 0, 'null') ON CONFLICT (scope, key) DO NOTHING`, req.Scope, req.Key, hash)
		if ins.Error != nil {
			return ins.Error
		}
		if ins.RowsAffected == 0 {
			return replay(tx, req, hash, &res)
		}
		status, data, err := write(tx)
		if err != nil {
			return err
		}
		raw, err := json.Marshal(data)
		if err != nil {
			return fmt.Errorf("encode response: %w", err)
		}
		if err := tx.Exec(`UPDATE idempotency_keys SET status = ?, response = ? WHERE scope = ? AND key = ?`,
			status, string(raw), req.Scope, req.Key).Error; err != nil {
			return err
		}
		res = Result{Status: status, Data: raw}
		return nil
	})
	return res, err
}

func replay(tx *gorm.DB, req Request, hash string, res *Result) error {
	var row struct {
		RequestHash string
		Status      int
		Response    []byte
	}
	if err := tx.Raw(`SELECT request_hash, status, response FROM idempotency_keys WHERE scope = ? AND key = ?`,
		req.Scope, req.Key).Scan(&row).Error; err != nil {
		return err
	}
	if row.RequestHash != hash {
		return ErrKeyReused
	}
	data, err := markReplayed(row.Response)
	if err != nil {
		return err
	}
	*res = Result{Status: row.Status, Data: data, Replayed: true}
	return nil
}

// markReplayed sets "replayed": true on a stored JSON object; a stored
// answer that is not an object is replayed as it was.
func markReplayed(stored []byte) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	_ = json.Unmarshal(stored, &obj) // obj stays nil unless stored is an object
	if obj == nil {
		return stored, nil
	}
	obj["replayed"] = json.RawMessage("true")
	return json.Marshal(obj)
}

// Hash returns the hex SHA-256 of v's canonical JSON (object keys sorted,
// insignificant whitespace removed, idempotency keys normalized).
func Hash(v any) (string, error) {
	canon, err := Canonical(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

// Canonical encodes v as canonical JSON.
func Canonical(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	normalizeKeys(generic)
	return json.Marshal(generic)
}

// normalizeKeys rewrites, at any depth, each KeyField holding a key in its
// normalized spelling, so a repeat spelling the key otherwise is the same
// request.
func normalizeKeys(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && k == KeyField {
				if n, ok := NormalizeKey(s); ok {
					v[k] = n
				}
				continue
			}
			normalizeKeys(e)
		}
	case []any:
		for _, e := range v {
			normalizeKeys(e)
		}
	}
}

// Purge deletes keys older than olderThan (at least Retention), a batch at
// a time so no statement holds many rows.
func Purge(ctx context.Context, db *gorm.DB, olderThan time.Duration) (int64, error) {
	olderThan = max(olderThan, Retention)
	age := fmt.Sprintf("%d seconds", int(olderThan.Seconds()))
	var total int64
	for {
		res := db.WithContext(ctx).Exec(`DELETE FROM idempotency_keys WHERE ctid = ANY (ARRAY(
	SELECT ctid FROM idempotency_keys WHERE created_at < now() - ?::interval LIMIT ?))`, age, purgeBatch)
		total += res.RowsAffected
		if res.Error != nil || res.RowsAffected < purgeBatch {
			return total, res.Error
		}
	}
}

const purgeBatch = 10_000

// PurgeInterval is how often a service purges its keys.
const PurgeInterval = time.Hour

// StartPurge runs Purge(Retention) now and then every interval until ctx
// ends or the returned closer runs; every service that records keys starts
// it, so the key table holds about a day of writes. Replicas purging at
// once delete each row once.
func StartPurge(ctx context.Context, db *gorm.DB, interval time.Duration) lifecycle.Closer {
	return lifecycle.Go(ctx, "idempotency key purge", func(ctx context.Context) {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if n, err := Purge(ctx, db, Retention); err != nil && ctx.Err() == nil {
				slog.Warn("purge idempotency keys", "error", err)
			} else if n > 0 {
				slog.Info("purged idempotency keys", "rows", n)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}
