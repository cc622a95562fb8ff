package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/cursor"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/servicetest"
	"partnerapi.dev/services/orders/internal/api"
	"partnerapi.dev/services/orders/internal/store"
)

// With the database unreachable, reads answer 503 service_unavailable and
// ingestion 503 capability_disabled, with no internals in the body.
func TestDatabaseUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := database.Open(ctx, database.Config{URL: config.Secret("postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")}, "orders")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	keys := servicetest.Keys(t)
	h := &api.Handlers{Repo: &store.Store{DB: db.SQL}, Cursors: cursor.New(bytes.Repeat([]byte{9}, 32)), Keys: keys, IngestToken: token}
	e := appEnv(t, h.App(nil), keys)
	for _, path := range []string{base, base + "/o1", base + "?order_id=o1"} {
		a := servicetest.Call[json.RawMessage](e.Client, http.MethodGet, path, helsinki, nil)
		if a.Status != http.StatusServiceUnavailable || a.Error != "service_unavailable" {
			t.Fatalf("%s: %d %s", path, a.Status, a.Raw)
		}
	}
	status, raw := e.ingestRaw(ndjson(order(helsinki, "u1", hel(2026, 3, 10, 12, 0))))
	if status != http.StatusServiceUnavailable || !strings.Contains(string(raw), "capability_disabled") || strings.Contains(string(raw), "127.0.0.1") {
		t.Fatalf("ingest: %d %s", status, raw)
	}
}
