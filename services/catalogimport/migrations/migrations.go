// Package migrations holds the catalogimport schema as numbered goose SQL
// files; the idempotency key table joins them as Go migration 2 (All).
package migrations

import (
	"embed"

	"github.com/pressly/goose/v3"

	"partnerapi.dev/pkg/idempotency"
)

// FS is the embedded migration files.
//
//go:embed *.sql
var FS embed.FS

// Go are the migrations written in Go: the shared idempotency key table.
func Go() []*goose.Migration { return []*goose.Migration{idempotency.Migration(2)} }
