package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/menus/internal/api"
	"partnerapi.dev/services/menus/internal/store"
	"partnerapi.dev/services/menus/migrations"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	helsinki = "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a01"
	other    = "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a03"
	token    = "test-ingest-token-0123456789"
)

var tenants = map[string]internalctx.Tenant{
	helsinki: {ID: helsinki, TimeZone: "Europe/Helsinki", DayStartHour: 4, Currency: "EUR", Country: "FI"},
	other:    {ID: other, TimeZone: "Europe/Helsinki", DayStartHour: 4, Currency: "EUR", Country: "FI"},
}

// Scopes the gateway grants, by the kind of call.
var (
	allScopes     = []string{contracts.ScopeRestaurantRead, contracts.ScopeMenuRead, contracts.ScopeMenuStructure, contracts.ScopeMenuPublish, contracts.ScopeCatalogImport}
	catalogScopes = []string{contracts.ScopeRestaurantRead, contracts.ScopeMenuRead, contracts.ScopeCatalogImport}
)

type env struct {
	t      testing.TB
	app    *fiber.App
	keys   *internalctx.Keyring
	db     *database.DB
	naming string
	scopes []string
	client string
	// unlisted: the path is not in the document (a 404 is expected).
	unlisted bool
}

func newEnv(t testing.TB) *env { return newEnvNaming(t, api.NamingA) }

func newEnvNaming(t testing.TB, naming string) *env {
	t.Helper()
	u := testenv.NewDatabase(t, "menus", database.MigrateURL("menus", migrations.FS, migrations.Go()...))
	ctx := context.Background()
	db, err := database.Open(ctx, database.Config{URL: config.Secret(u)}, "menus")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(ctx) })
	keys, err := internalctx.ParseKeys("k1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	h := &api.Handlers{Repo: &store.Store{DB: db.Gorm}, Keys: keys, IngestToken: token, NamingSet: naming}
	return &env{t: t, app: h.App(nil), keys: keys, db: db, naming: naming, scopes: allScopes, client: "client-1"}
}

// do sends a request with the gateway's context for tenant ("" sends none)
// and checks every partner answer against the OpenAPI document of the
// env's naming set.
func (e *env) do(method, path, tenant string, body any) (int, []byte) {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if tenant != "" {
		ten := tenants[tenant]
		req.Header.Set(internalctx.Header, e.keys.Sign(internalctx.Context{ClientID: e.client, UserID: "u", GrantID: "g",
			Scopes: e.scopes, Tenant: &ten, RequestID: "req-1"}))
	}
	resp, err := e.app.Test(req, 30_000)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(path, "/v1/") && !e.unlisted {
		u, _ := url.Parse(path)
		h := resp.Header.Clone()
		h.Set("RateLimit-Policy", `"partner";q=60;w=60`)
		if e.naming == api.NamingB {
			apispec.ValidateResponseSetB(e.t, method, u.Path, u.Query(), resp.StatusCode, h, raw)
		} else {
			apispec.ValidateResponse(e.t, method, u.Path, u.Query(), resp.StatusCode, h, raw)
		}
	}
	return resp.StatusCode, raw
}

// call is do decoding the answer as an object.
func (e *env) call(method, path, tenant string, body any) (int, map[string]any) {
	e.t.Helper()
	status, raw := e.do(method, path, tenant, body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		e.t.Fatalf("%s %s: %d %s", method, path, status, raw)
	}
	return status, m
}

// must is call expecting status, returning data.
func (e *env) must(want int, method, path, tenant string, body any) map[string]any {
	e.t.Helper()
	status, m := e.call(method, path, tenant, body)
	if status != want {
		e.t.Fatalf("%s %s: %d, want %d: %v", method, path, status, want, m)
	}
	data, _ := m["data"].(map[string]any)
	return data
}

// errorOf expects an error answer and returns its code and message.
func (e *env) errorOf(want int, method, path, tenant string, body any) string {
	e.t.Helper()
	status, m := e.call(method, path, tenant, body)
	if status != want {
		e.t.Fatalf("%s %s: %d, want %d: %v", method, path, status, want, m)
	}
	msg, _ := m["message"].(string)
	return m["error"].(string) + ": " + msg
}

func (e *env) ingest(snaps ...contracts.MenuCatalog) {
	e.t.Helper()
	var b strings.Builder
	for _, s := range snaps {
		raw, _ := json.Marshal(s)
		b.Write(raw)
		b.WriteByte('\n')
	}
	req := httptest.NewRequest(http.MethodPost, contracts.MenusIngestPath, strings.NewReader(b.String()))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/x-ndjson")
	resp, err := e.app.Test(req, 30_000)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		e.t.Fatalf("ingest: %d %s", resp.StatusCode, raw)
	}
}

func str(s string) *string { return &s }
