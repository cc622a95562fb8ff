// Command events numbers each restaurant's events and serves the pull feed,
// and migrates the events schema.
//
//	events [serve]    answer HTTP on HTTP_ADDR (metrics on INTERNAL_HTTP_ADDR), keep partitions,
//	                  send webhooks
//	events migrate    apply the schema migrations
package main

import (
	"context"
	"fmt"
	"log/slog"

	pkgconfig "partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/services/events/internal/config"
	"partnerapi.dev/services/events/internal/server"
	"partnerapi.dev/services/events/internal/store"
	"partnerapi.dev/services/events/migrations"
)

func main() {
	service.Main(service.Spec[*config.Serve]{
		Name: "events", Migrations: migrations.FS, GoMigrations: service.Steps(migrations.Go()...), Reads: true,
		AfterMigrate: sealSecrets,
		Build:        server.Build,
	})
}

// sealSecrets is the data step of the migration: secrets in clear, or
// sealed under an older key, are sealed under the active one.
func sealSecrets(ctx context.Context, db *database.DB) error {
	var keys config.WebhookSecretKeys
	if err := pkgconfig.Load(ctx, &keys); err != nil {
		return err
	}
	secrets, err := keys.Keyring()
	if err != nil {
		return err
	}
	n, err := (&store.Store{DB: db.Gorm, Secrets: secrets}).SealSecrets(ctx)
	if err != nil {
		return fmt.Errorf("sealing webhook secrets: %w", err)
	}
	if n > 0 {
		slog.Info("webhook secrets sealed under the active key", "rows", n)
	}
	return nil
}
