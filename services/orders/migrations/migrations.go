// Package migrations holds the orders schema as numbered goose SQL files plus
// the migrations written in Go: the event outbox (pkg/outbox), the hash
// partitioning of the order tables by restaurant, and the move of each
// order's lines, VAT rows, refunds and payment references into its row
// (whose arrays migration 11, in SQL, makes positional).
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

// Go are the migrations written in Go, applied with FS. partitions is how
// many hash partitions by restaurant the order tables get when migration 8
// runs (ORDERS_PARTITIONS); a database migrated past it keeps its count.
func Go(partitions int) []*goose.Migration {
	return []*goose.Migration{outbox.Migration(4), outbox.TraceMigration(7), partitionMigration(8, partitions), outbox.ActorMigration(9), detailsMigration(10), recentTotalsMigration(12)}
}
