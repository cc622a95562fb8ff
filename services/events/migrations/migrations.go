// Package migrations holds the events schema as numbered goose SQL files.
// The day partitions of the events table are not migrations: the service
// creates them ahead and drops them past the retention (store.Retention).
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

// Go are the migrations written in Go, applied with FS: the idempotency keys
// of the webhook endpoint writes.
func Go() []*goose.Migration { return []*goose.Migration{idempotency.Migration(3)} }
