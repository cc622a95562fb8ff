// Package migrations holds the accounting schema as numbered goose SQL files
// plus the idempotency key table (a Go migration from pkg/idempotency).
package migrations

import (
	"embed"

	"github.com/pressly/goose/v3"
	"partnerapi.dev/pkg/idempotency"
	"partnerapi.dev/pkg/outbox"
)

// FS is the embedded migration files.
//
//go:embed *.sql
var FS embed.FS

// Go returns the Go migrations applied with FS.
func Go() []*goose.Migration {
	return []*goose.Migration{idempotency.Migration(2), outbox.Migration(3), outbox.TraceMigration(4), outbox.ActorMigration(5)}
}
