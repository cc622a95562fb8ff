// Package migrations holds the orders schema as numbered goose SQL files.
package migrations

import "embed"

// FS is the embedded migration files.
//
//go:embed *.sql
var FS embed.FS
