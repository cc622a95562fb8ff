package contracts

// Scopes of the API.
const (
	ScopeRestaurantRead   = "svc.restaurant.read"
	ScopeOrganizationRead = "svc.organization.read"
	ScopeOrdersRead       = "svc.orders.read"
	ScopeAccountingRead   = "svc.accounting.read"
	ScopeAnalyticsRead    = "svc.analytics.read"
	ScopeCorrectionsWrite = "svc.accounting.corrections.write"
	ScopeMenuRead         = "svc.menu.read"
	ScopeMenuStructure    = "svc.menu.structure.write"
	ScopeMenuPublish      = "svc.menu.publish.write"
	ScopeCatalogImport    = "svc.catalog.import.write"
	ScopeWebhooksManage   = "svc.webhooks.manage"
)

// Scope is one scope with the plain words an owner reads on the consent page.
type Scope struct{ Name, Words string }

// Scopes lists every scope, in the order the consent page and the docs show them.
var Scopes = []Scope{
	{ScopeRestaurantRead, "See the restaurant's name, business identity and settings"},
	{ScopeOrganizationRead, "See the organizations you manage and which restaurants they include"},
	{ScopeOrdersRead, "Read orders and their details"},
	{ScopeAccountingRead, "Read payment reports and refund events"},
	{ScopeAnalyticsRead, "Read sales analytics used for payment corrections"},
	{ScopeCorrectionsWrite, "Correct and undo payment methods in the accounts"},
	{ScopeMenuRead, "Read menus and menu items"},
	{ScopeMenuStructure, "Create draft menus and edit draft items"},
	{ScopeMenuPublish, "Choose which menu is live on the POS and for online ordering"},
	{ScopeCatalogImport, "Import new items into a draft menu"},
	{ScopeWebhooksManage, "Send the changes you allow it to read to the application's web address as they happen"},
}

// ScopeNames lists the names of Scopes, in order.
func ScopeNames() []string {
	out := make([]string, len(Scopes))
	for i, s := range Scopes {
		out[i] = s.Name
	}
	return out
}
