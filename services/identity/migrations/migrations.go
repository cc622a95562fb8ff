// Package migrations holds the identity schema's goose migrations, embedded
// so the binary migrates itself, and the event outbox (Go migrations of
// pkg/outbox) that carries authorization.revoked events.
package migrations

import (
	"embed"

	"github.com/pressly/goose/v3"

	"partnerapi.dev/pkg/outbox"
)

// FS holds the numbered SQL files.
//
//go:embed *.sql
var FS embed.FS

// Go are the migrations written in Go, applied with FS.
func Go() []*goose.Migration {
	return []*goose.Migration{outbox.Migration(8), outbox.TraceMigration(9), outbox.ActorMigration(10)}
}
