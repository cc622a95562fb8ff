// Package migrations holds the identity schema's goose migrations, embedded
// so the binary migrates itself.
package migrations

import "embed"

// FS holds the numbered SQL files.
//
//go:embed *.sql
var FS embed.FS
