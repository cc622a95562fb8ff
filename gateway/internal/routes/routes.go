// Package routes is the gateway's route table: every partner operation of the
// contract with its method, path, required scopes, owning service and whether
// it writes. The gateway, its tests and its docs read this one table.
package routes

import (
	"strings"
	"time"

	"partnerapi.dev/services/contracts"
)

// Service names a process that owns operations.
type Service string

// Owning services.
const (
	Identity      Service = "identity"
	Orders        Service = "orders"
	Accounting    Service = "accounting"
	Menus         Service = "menus"
	CatalogImport Service = "catalogimport"
	Events        Service = "events"
)

// MaxWait is how long a service may hold a request on purpose before
// answering (the events feed's long poll, wait ≤ 30 s); the gateway adds it
// to its upstream timeout for that service.
func (s Service) MaxWait() time.Duration {
	if s == Events {
		return 30 * time.Second
	}
	return 0
}

// Deprecation marks a retiring operation; every response of it then carries
// Deprecation, Sunset and Link headers.
type Deprecation struct {
	At     time.Time
	Sunset time.Time
	Link   string
}

// Operation is one partner operation.
type Operation struct {
	ID     string
	Method string
	// Path is the OpenAPI template, e.g. /v1/restaurants/{restaurantId}/orders.
	Path    string
	Scopes  []string
	Service Service
	Write   bool
	// RestaurantScoped operations carry {restaurantId} and are checked
	// against the grant's restaurants and organization_id rules.
	RestaurantScoped bool
	// ListsRestaurants is GET /v1/restaurants: organization-boundary tokens
	// need svc.organization.read there too.
	ListsRestaurants bool
	// UUIDParams are path parameters that must be UUIDs (else 404).
	UUIDParams []string
	// OpaqueParams are path parameters of at most 255 characters (else 400).
	OpaqueParams []string
	Deprecation  *Deprecation
}

// FiberPath is Path with {name} written :name.
func (o Operation) FiberPath() string {
	var b strings.Builder
	for _, seg := range strings.Split(o.Path, "/")[1:] {
		b.WriteByte('/')
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			b.WriteString(":" + seg[1:len(seg)-1])
		} else {
			b.WriteString(seg)
		}
	}
	return b.String()
}

// NamingSet selects the menu resource names (see the contract's Naming
// variants): "A" (menuId, /menus/pos) or "B" (menuPublicId, /menus/active).
type NamingSet string

// Naming sets.
const (
	NamingA NamingSet = "A"
	NamingB NamingSet = "B"
)

// Table returns every operation served under naming set ns. The other set's
// paths are absent, so they answer 404.
func Table(ns NamingSet) []Operation {
	menuID, itemID, posPath := "menuId", "catalogItemId", "pos"
	if ns == NamingB {
		menuID, itemID, posPath = "menuPublicId", "menuItemPublicId", "active"
	}
	r := "/v1/restaurants/{restaurantId}"
	read := []string{contracts.ScopeRestaurantRead}
	with := func(extra ...string) []string { return append(append([]string{}, read...), extra...) }
	acctWrite := with(contracts.ScopeAccountingRead, contracts.ScopeAnalyticsRead, contracts.ScopeCorrectionsWrite)
	menuStructure := with(contracts.ScopeMenuRead, contracts.ScopeMenuStructure)
	menuPublish := with(contracts.ScopeMenuRead, contracts.ScopeMenuPublish)
	catalog := with(contracts.ScopeMenuRead, contracts.ScopeCatalogImport)
	webhooks := with(contracts.ScopeWebhooksManage)
	rest := func(id, method, path string, svc Service, write bool, scopes []string, uuids ...string) Operation {
		return Operation{ID: id, Method: method, Path: r + path, Scopes: scopes, Service: svc, Write: write,
			RestaurantScoped: true, UUIDParams: append([]string{"restaurantId"}, uuids...)}
	}
	ops := []Operation{
		{ID: "listRestaurants", Method: "GET", Path: "/v1/restaurants", Scopes: read, Service: Identity, ListsRestaurants: true},
		{ID: "listOrganizations", Method: "GET", Path: "/v1/organizations", Scopes: with(contracts.ScopeOrganizationRead), Service: Identity},

		rest("getPaymentReport", "GET", "/payment-report", Accounting, false, with(contracts.ScopeAccountingRead)),
		// Our extension: the sales, VAT, discounts, tips and refunds that go
		// with the payment report.
		rest("getAccountingSummary", "GET", "/accounting-summary", Accounting, false, with(contracts.ScopeAccountingRead)),
		rest("listRefunds", "GET", "/refunds", Accounting, false, with(contracts.ScopeOrdersRead, contracts.ScopeAccountingRead)),
		rest("getPaymentCorrectionWorkspace", "GET", "/payment-correction-workspace", Accounting, false, acctWrite),
		rest("previewPaymentCorrection", "POST", "/payment-corrections/preview", Accounting, true, acctWrite),
		rest("applyPaymentCorrection", "POST", "/payment-corrections/apply", Accounting, true, acctWrite),
		rest("undoPaymentCorrection", "POST", "/payment-corrections/undo", Accounting, true, acctWrite),

		rest("searchOrders", "GET", "/orders", Orders, false, with(contracts.ScopeOrdersRead)),
		rest("getOrder", "GET", "/orders/{orderId}", Orders, false, with(contracts.ScopeOrdersRead)),

		rest("listMenus", "GET", "/menus", Menus, false, with(contracts.ScopeMenuRead)),
		rest("createMenu", "POST", "/menus", Menus, true, menuStructure),
		rest("listMenuItems", "GET", "/menus/{"+menuID+"}/items", Menus, false, with(contracts.ScopeMenuRead), menuID),
		rest("addMenuItems", "POST", "/menus/{"+menuID+"}/items", Menus, true, menuStructure, menuID),
		rest("getDraftMenuItem", "GET", "/menus/{"+menuID+"}/items/{"+itemID+"}", Menus, false, menuStructure, menuID, itemID),
		rest("updateDraftMenuItem", "PATCH", "/menus/{"+menuID+"}/items/{"+itemID+"}", Menus, true, menuStructure, menuID, itemID),
		rest("setPosMenu", "PUT", "/menus/"+posPath, Menus, true, menuPublish),
		rest("setOnlineMenu", "PUT", "/menus/online", Menus, true, menuPublish),

		rest("getCatalogImportCapabilities", "GET", "/catalog-import/capabilities", CatalogImport, false, catalog),
		rest("getCatalogImportTarget", "GET", "/catalog-import/targets/{"+menuID+"}", CatalogImport, false, catalog, menuID),
		rest("planCatalogImport", "POST", "/catalog-import/plan", CatalogImport, true, catalog),
		rest("applyCatalogImport", "POST", "/catalog-import/apply", CatalogImport, true, catalog),

		// Our extension: the restaurant's numbered event log. Reading it
		// needs the restaurant; each event's own scopes filter what it shows.
		rest("listRestaurantEvents", "GET", "/events", Events, false, read),

		// Our extension: webhook endpoints the partner manages. Each
		// endpoint's event types stay within what the grant can read,
		// checked again at every delivery.
		rest("createWebhookEndpoint", "POST", "/webhook-endpoints", Events, true, webhooks),
		rest("listWebhookEndpoints", "GET", "/webhook-endpoints", Events, false, webhooks),
		rest("updateWebhookEndpoint", "PATCH", "/webhook-endpoints/{endpointId}", Events, true, webhooks, "endpointId"),
		rest("deleteWebhookEndpoint", "DELETE", "/webhook-endpoints/{endpointId}", Events, true, webhooks, "endpointId"),
		rest("rotateWebhookEndpointSecret", "POST", "/webhook-endpoints/{endpointId}/rotate-secret", Events, true, webhooks, "endpointId"),
		rest("sendWebhookTestEvent", "POST", "/webhook-endpoints/{endpointId}/test", Events, true, webhooks, "endpointId"),
		rest("listWebhookDeliveries", "GET", "/webhook-endpoints/{endpointId}/deliveries", Events, false, webhooks, "endpointId"),
		rest("retryWebhookDelivery", "POST", "/webhook-endpoints/{endpointId}/deliveries/{deliveryId}/retry", Events, true, webhooks, "endpointId"),
		rest("replayWebhookEvents", "POST", "/webhook-endpoints/{endpointId}/replay", Events, true, webhooks, "endpointId"),
	}
	for i := range ops {
		switch ops[i].ID {
		case "getOrder":
			ops[i].OpaqueParams = []string{"orderId"}
		case "retryWebhookDelivery":
			ops[i].OpaqueParams = []string{"deliveryId"}
		}
	}
	return ops
}
