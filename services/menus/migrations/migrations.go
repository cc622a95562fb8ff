// Package migrations holds the menus schema as numbered goose SQL files plus
// the idempotency key table and the event outbox (Go migrations of
// pkg/idempotency and pkg/outbox).
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

// Go are the migrations written in Go, applied with FS.
func Go() []*goose.Migration {
	return []*goose.Migration{idempotency.Migration(2), outbox.Migration(3), outbox.TraceMigration(5), outbox.ActorMigration(6)}
}
