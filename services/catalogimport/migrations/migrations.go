// Package migrations holds the catalogimport schema as numbered goose SQL
// files; the idempotency key table and the event outbox join them as Go
// migrations 2 and 3.
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

// Go are the migrations written in Go: the shared idempotency key table
// and the event outbox.
func Go() []*goose.Migration {
	return []*goose.Migration{idempotency.Migration(2), outbox.Migration(3), outbox.TraceMigration(4), outbox.ActorMigration(5)}
}
