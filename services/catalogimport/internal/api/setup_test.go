package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/servicetest"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/catalogimport/internal/api"
	"partnerapi.dev/services/catalogimport/internal/domain"
	"partnerapi.dev/services/catalogimport/internal/menus"
	"partnerapi.dev/services/catalogimport/internal/store"
	"partnerapi.dev/services/catalogimport/migrations"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

const (
	helsinki = "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a01"
	other    = "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a03"
	client   = "partner-client-1"
	user     = "7d3f6c2a-1b4e-4f5a-8c9d-0e1f2a3b4c5d"
)

var tenants = map[string]internalctx.Tenant{
	helsinki: {ID: helsinki, TimeZone: "Europe/Helsinki", DayStartHour: 4, Currency: "EUR", Country: "FI"},
	other:    {ID: other, TimeZone: "Europe/Helsinki", DayStartHour: 4, Currency: "EUR", Country: "FI"},
}

func TestMain(m *testing.M) { testenv.Main(m) }

// menusBinary is the real menus service, built from ../menus once for the
// package (apply writes through it); "" when that module is absent.
func menusBinary(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat("../../../menus/go.mod"); err != nil {
		return ""
	}
	testenv.Sources(t) // the binary is built from them
	dir := testenv.SharedDir(t, "menus", func(dir string) error {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "menus"), "./cmd/menus")
		cmd.Dir = "../../../menus"
		cmd.Env = append(os.Environ(), "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build the menus service: %w\n%s", err, out)
		}
		return nil
	})
	return filepath.Join(dir, "menus")
}

type env struct {
	t        testing.TB
	h        *api.Handlers
	app      *fiber.App
	keys     *internalctx.Keyring
	db       *database.DB
	store    *store.Store
	menusURL string
	dbURL    string
	setB     bool
}

type options struct {
	settings *domain.Settings
	// menusURL overrides the menus service (an address where nothing listens).
	menusURL string
	// namingB serves naming set B.
	namingB bool
}

// newEnv gives the test its own database; with the real menus service
// (started on it, sharing the keys) unless opts.menusURL points elsewhere.
func newEnv(t testing.TB, opts options) *env {
	t.Helper()
	menusBin := menusBinary(t)
	dbURL := testenv.NewDatabase(t, "catalogimport", migrateBoth(menusBin))
	ctx := context.Background()
	db, err := database.Open(ctx, database.Config{URL: config.Secret(dbURL)}, "catalogimport")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(ctx) })
	keys := servicetest.Keys(t)
	e := &env{t: t, keys: keys, db: db, store: &store.Store{DB: db.Gorm}, dbURL: dbURL, menusURL: opts.menusURL}
	if e.menusURL == "" {
		e.menusURL = startMenus(t, menusBin, dbURL)
	}
	s := domain.Settings{Limits: domain.ContractLimits, CombosEnabled: true}
	if opts.settings != nil {
		s = *opts.settings
	}
	client := &menus.Client{BaseURL: e.menusURL, HTTP: &http.Client{Timeout: 20 * time.Second}}
	e.h = &api.Handlers{Settings: s, Menus: client.For, Imports: e.store, Keys: keys, NamingSet: api.NamingA}
	if opts.namingB {
		e.h.NamingSet, e.setB = api.NamingB, true
	}
	e.app = e.h.App(nil)
	return e
}

// migrateBoth migrates the catalogimport schema and, when the menus service
// is built, the menus schema with its own migrate command.
func migrateBoth(menusBin string) testenv.MigrateFunc {
	return func(ctx context.Context, dbURL string) error {
		if err := database.MigrateURL("catalogimport", migrations.FS, migrations.Go()...)(ctx, dbURL); err != nil {
			return err
		}
		if menusBin == "" {
			return nil
		}
		cmd := exec.CommandContext(ctx, menusBin, "migrate")
		cmd.Env = append(os.Environ(), menusEnv(dbURL, "127.0.0.1:0", "127.0.0.1:0")...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("menus migrate: %w\n%s", err, out)
		}
		return nil
	}
}

func menusEnv(dbURL, addr, internalAddr string) []string {
	return []string{"DATABASE_URL=" + dbURL, "INTERNAL_CONTEXT_KEYS=" + servicetest.KeySpec, "HTTP_ADDR=" + addr,
		"INTERNAL_HTTP_ADDR=" + internalAddr, "INGEST_TOKEN=test-ingest-token-0123456789", "LOG_LEVEL=warn"}
}

// startMenus runs `menus serve` on the test's database until the test ends.
func startMenus(t testing.TB, menusBin, dbURL string) string {
	t.Helper()
	if menusBin == "" {
		t.Skip("the menus service (services/menus) is not in this checkout")
	}
	addr := testenv.FreeAddr(t)
	cmd := exec.Command(menusBin, "serve")
	cmd.Env = append(os.Environ(), menusEnv(dbURL, addr, testenv.FreeAddr(t))...)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("menus service log:\n%s", logs.String())
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("menus service not ready at %s:\n%s", base, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// client is how the gateway calls e.app for a grant of every catalog
// scope.
func (e *env) client() *servicetest.Client {
	c := servicetest.NewClient(e.t, e.app, e.keys,
		"svc.restaurant.read", "svc.menu.read", "svc.catalog.import.write", "svc.menu.structure.write", "svc.menu.publish.write")
	c.ClientID, c.UserID, c.Tenants, c.NamingB, c.Timeout = client, user, tenants, e.setB, time.Minute
	return c
}

// do sends a request to catalogimport; tenant "" sends no internal context.
// Every answer is checked against the OpenAPI document.
func (e *env) do(method, path, tenant string, body any) (int, []byte) {
	e.t.Helper()
	return e.client().Do(method, path, tenant, body, nil)
}

// menus sends a request straight to the menus service's public API, as the
// gateway would (to set up menus the tests import into).
func (e *env) menus(method, path, tenant string, body any) (int, []byte) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, e.menusURL+path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(internalctx.Header, e.client().Signed(tenant))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func base(r string) string { return "/v1/restaurants/" + r + "/catalog-import" }

// must sends a request to catalogimport expecting status want and answers
// its data.
func must[T any](e *env, want int, method, path, tenant string, body any) T {
	e.t.Helper()
	return servicetest.Must[T](e.client(), want, method, path, tenant, body)
}

// data decodes an answer's data, which must be there.
func data[T any](t testing.TB, raw []byte) T {
	t.Helper()
	var env struct {
		Data *T `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || env.Data == nil {
		t.Fatalf("no data in %s: %v", raw, err)
	}
	return *env.Data
}

// cafe is the documented example (testdata/cafe.json) as a generic value.
func cafe(t testing.TB) map[string]any {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/cafe.json")
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// golden compares an answer with testdata/name (rewritten with -update).
func golden(t *testing.T, name string, raw []byte) {
	t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, raw, "", "  "); err != nil {
		t.Fatal(err)
	}
	pretty.WriteByte('\n')
	file := filepath.Join("..", "..", "testdata", name)
	if *update {
		if err := os.WriteFile(file, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update once)", err)
	}
	if !bytes.Equal(want, pretty.Bytes()) {
		t.Errorf("answer differs from %s:\n%s", file, pretty.String())
	}
}
