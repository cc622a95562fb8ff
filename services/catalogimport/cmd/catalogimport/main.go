// Command catalogimport plans partners' catalog import documents and applies
// them through the menus service's internal catalog API, and migrates the
// catalogimport schema.
//
//	catalogimport [serve]   answer HTTP on HTTP_ADDR (metrics on INTERNAL_HTTP_ADDR)
//	catalogimport migrate   apply the schema migrations
package main

import (
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/services/catalogimport/internal/config"
	"partnerapi.dev/services/catalogimport/internal/server"
	"partnerapi.dev/services/catalogimport/migrations"
)

var spec = service.Spec[*config.Serve]{
	Name: "catalogimport", Migrations: migrations.FS, GoMigrations: service.Steps(migrations.Go()...),
	Build: server.Build,
}

func main() { service.Main(spec) }
