// Package migrations holds the orders schema as numbered goose SQL files plus
// the event outbox (a Go migration of pkg/outbox).
package migrations

import (
	"embed"

	"github.com/pressly/goose/v3"
	"partnerapi.dev/pkg/outbox"
)

// FS is the embedded migration files.
//
//go:embed *.sql
var FS embed.FS

// Go are the migrations written in Go, applied with FS.
func Go() []*goose.Migration { return []*goose.Migration{outbox.Migration(4)} }
