package api_test

import (
	"net/http"
	"testing"

	"github.com/gofiber/fiber/v2"
	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/service"
	"partnerapi.dev/pkg/servicetest"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/menus/internal/api"
	menusconfig "partnerapi.dev/services/menus/internal/config"
	"partnerapi.dev/services/menus/internal/server"
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
	*servicetest.Client
	t      testing.TB
	app    *fiber.App
	db     *database.DB
	naming string
}

func newEnv(t testing.TB) *env { return newEnvNaming(t, api.NamingA) }

func newEnvNaming(t testing.TB, naming string) *env {
	t.Helper()
	u := testenv.NewDatabase(t, "menus", database.MigrateURL("menus", migrations.FS, migrations.Go()...))
	db, _ := servicetest.Open(t, database.Config{URL: config.Secret(u)}, "menus")
	var sc menusconfig.Serve
	srv := servicetest.Serve(t, &sc, map[string]string{"DATABASE_URL": u, "INGEST_TOKEN": token, "MENU_NAMING_SET": naming},
		service.Process{DB: db}, server.Build)
	c := servicetest.NewClient(t, srv.Public, sc.Keys(), allScopes...)
	c.Tenants, c.NamingB = tenants, naming == api.NamingB
	return &env{Client: c, t: t, app: srv.Public, db: db, naming: naming}
}

// do sends a request with the gateway's context for tenant ("" sends none)
// and checks every partner answer against the OpenAPI document of the
// env's naming set.
func (e *env) do(method, path, tenant string, body any) (int, []byte) {
	e.t.Helper()
	return e.Do(method, path, tenant, body, nil)
}

// must is a call expecting status, returning data decoded as T.
func must[T any](e *env, want int, method, path, tenant string, body any) T {
	e.t.Helper()
	return servicetest.Must[T](e.Client, want, method, path, tenant, body)
}

// errorOf expects an error answer and returns its code and message.
func (e *env) errorOf(want int, method, path, tenant string, body any) string {
	e.t.Helper()
	return servicetest.Refused(e.Client, want, method, path, tenant, body)
}

func (e *env) ingest(snaps ...contracts.MenuCatalog) {
	e.t.Helper()
	if status, raw := e.Ingest(contracts.MenusIngestPath, token, servicetest.NDJSON(e.t, snaps...)); status != http.StatusOK {
		e.t.Fatalf("ingest: %d %s", status, raw)
	}
}

func str(s string) *string { return &s }

// val is *p, "" for nil.
func val(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// menuWrite is the data of a menu write's answer (create, add items, set
// POS or online), as tests read it.
type menuWrite struct {
	ActionID             string                `json:"actionId"`
	Replayed             bool                  `json:"replayed"`
	Menu                 contracts.MenuSummary `json:"menu"`
	PreviousPosMenuID    *string               `json:"previousPosMenuId"`
	PreviousOnlineMenuID *string               `json:"previousOnlineMenuId"`
	AddedCatalogItemIDs  []string              `json:"addedCatalogItemIds"`
}

// menuList is the data of the menu list.
type menuList struct {
	RestaurantID string                  `json:"restaurantId"`
	Menus        []contracts.MenuSummary `json:"menus"`
	PosMenuID    *string                 `json:"posMenuId"`
	OnlineMenuID *string                 `json:"onlineMenuId"`
}

// itemListing is the data of a menu's item listing.
type itemListing struct {
	RestaurantID string       `json:"restaurantId"`
	MenuID       string       `json:"menuId"`
	Currency     string       `json:"currency"`
	Items        []listedItem `json:"items"`
	Truncated    bool         `json:"truncated"`
	NextAfter    *string      `json:"nextAfter"`
}

// listedItem is a row of the item listing. The document requires only its
// ids, name and prices, so openPrice is a pointer: absent is not false.
type listedItem struct {
	CatalogItemID       string  `json:"catalogItemId"`
	Name                string  `json:"name"`
	Description         *string `json:"description"`
	CategoryID          string  `json:"categoryId"`
	CategoryName        string  `json:"categoryName"`
	EffectivePriceMinor int64   `json:"effectivePriceMinor"`
	BasePriceMinor      int64   `json:"basePriceMinor"`
	PriceSource         string  `json:"priceSource"`
	Availability        string  `json:"availability"`
	ProductType         string  `json:"productType"`
	OpenPrice           *bool   `json:"openPrice"`
}

// draftItem is a draft menu's item as inspection and edits show it.
type draftItem struct {
	CatalogItemID  string  `json:"catalogItemId"`
	CategoryID     string  `json:"categoryId"`
	Name           string  `json:"name"`
	BasePriceMinor int64   `json:"basePriceMinor"`
	Description    *string `json:"description"`
	Visible        bool    `json:"visible"`
	ShowInKitchen  bool    `json:"showInKitchen"`
}

// itemTarget is the data of an item's inspection.
type itemTarget struct {
	RestaurantID    string                `json:"restaurantId"`
	Menu            contracts.MenuSummary `json:"menu"`
	Item            draftItem             `json:"item"`
	SharedMenuCount int                   `json:"sharedMenuCount"`
	CanEdit         bool                  `json:"canEdit"`
	Version         string                `json:"version"`
}

// itemEdit is the data of an item edit's answer.
type itemEdit struct {
	ActionID        string    `json:"actionId"`
	RestaurantID    string    `json:"restaurantId"`
	MenuID          string    `json:"menuId"`
	Item            draftItem `json:"item"`
	PreviousVersion string    `json:"previousVersion"`
	Version         string    `json:"version"`
	Replayed        bool      `json:"replayed"`
}

// newMenu is the body of a menu create.
type newMenu struct {
	Name           string `json:"name"`
	IdempotencyKey string `json:"idempotencyKey"`
}

// write is a menu write expecting status want, decoded.
func (e *env) write(want int, method, path string, body any) menuWrite {
	e.t.Helper()
	return servicetest.Must[menuWrite](e.Client, want, method, path, helsinki, body)
}

// listMenus reads the restaurant's menus.
func (e *env) listMenus(restaurant string) menuList {
	e.t.Helper()
	return servicetest.Must[menuList](e.Client, http.StatusOK, http.MethodGet, menus(restaurant), restaurant, nil)
}

// listItems reads a menu's items (path carries the query, if any).
func (e *env) listItems(path string) itemListing {
	e.t.Helper()
	return must[itemListing](e, http.StatusOK, http.MethodGet, path, helsinki, nil)
}

// inspect reads an item of one of helsinki's menus.
func (e *env) inspect(menu, item string) itemTarget {
	e.t.Helper()
	return must[itemTarget](e, http.StatusOK, http.MethodGet, itemPath(helsinki, menu, item), helsinki, nil)
}

// use makes t the test e reports to (a subtest's, a fuzz target's).
func (e *env) use(t testing.TB) { e.t = t; e.Use(t) }
