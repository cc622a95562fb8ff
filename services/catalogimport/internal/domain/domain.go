// Package domain plans a partner's catalog import document against the
// capabilities and the target menu, and applies a valid plan as one
// create-only batch through the menus service. It owns the ports it needs
// (Menus, Repository) and imports neither Fiber nor gorm.
package domain

import (
	"context"
	"encoding/json"

	"partnerapi.dev/pkg/fault"
	"partnerapi.dev/services/contracts"
)

// Limits are the most entities of each kind one document may create.
type Limits struct {
	MenuCategories    int
	MenuItems         int
	OptionGroups      int
	Options           int
	ProductCategories int
	Products          int
	Combos            int
	ComboComponents   int
}

// ContractLimits are the contract's import limits: the defaults, and the
// most a deployment may configure.
var ContractLimits = Limits{
	MenuCategories: 20, MenuItems: 100, OptionGroups: 20, Options: 100,
	ProductCategories: 20, Products: 100, Combos: 20, ComboComponents: 100,
}

// Settings are the deployment's import settings.
type Settings struct {
	Limits        Limits
	CombosEnabled bool
}

// Capabilities is what an importer must honor before producing a document.
type Capabilities struct {
	CreateOnly             bool
	PublishesAutomatically bool
	CombosEnabled          bool
	TargetModes            []string
	SupportedEntities      []string
	Limits                 Limits
}

// Capabilities of this deployment. Imports only create, and never publish.
func (s Settings) Capabilities() Capabilities {
	return Capabilities{
		CreateOnly:             true,
		PublishesAutomatically: false,
		CombosEnabled:          s.CombosEnabled,
		TargetModes:            []string{contracts.CatalogTargetNewDraft, contracts.CatalogTargetExistingDraft},
		SupportedEntities:      []string{"menu", "menu_category", "menu_item", "option_group", "option", "product_category", "product", "combo"},
		Limits:                 s.Limits,
	}
}

// Target says where an import goes: a new draft (MenuID empty) or an
// existing inactive draft.
type Target struct {
	Mode   string `json:"mode"`
	MenuID string `json:"menuId,omitempty"`
}

// Issue is one plan error or warning; Path is an RFC 6901 JSON Pointer into
// the document ("" for the document as a whole, e.g. its target).
type Issue struct {
	Code    string `json:"code"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Menus is the menus service's internal catalog API, acting for the partner
// request being answered.
type Menus interface {
	// Target reads a menu of the restaurant; ErrMenuNotFound when it is
	// unknown, ErrMenusUnavailable when the service cannot be reached.
	Target(ctx context.Context, restaurantID, menuID string) (contracts.CatalogTarget, error)
	// WriteBatch writes a batch in one transaction (or answers what a batch
	// of the same id wrote); its refusals are errors of fault kinds.
	WriteBatch(ctx context.Context, restaurantID string, b contracts.CatalogBatch) (contracts.CatalogBatchResult, error)
}

// Errors of the import.
var (
	// ErrMenuNotFound: the target menu is not one of the restaurant's.
	ErrMenuNotFound = fault.New(fault.NotFound, "menu not found")
	// ErrMenusUnavailable: the menus service cannot be reached; a write
	// answers capability_disabled, a read service_unavailable.
	ErrMenusUnavailable = fault.New(fault.Unavailable, "the menus service is unavailable")
	// ErrKeyReused: the idempotency key was used with another body.
	ErrKeyReused = fault.New(fault.Conflict, "This idempotencyKey was already used with a different request body; use a new key for a new request.")
)

// invalid is a request that must change.
func invalid(msg string) error { return fault.New(fault.Invalid, msg) }

// conflict is a request that collides with the current state.
func conflict(msg string) error { return fault.New(fault.Conflict, msg) }

// Applied is the answer to an apply, as sent and as stored with the
// idempotency key to be replayed verbatim (with replayed set).
type Applied struct {
	ActionID     string                       `json:"actionId"`
	RestaurantID string                       `json:"restaurantId"`
	Menu         contracts.MenuSummary        `json:"menu"`
	Created      contracts.CatalogCounts      `json:"created"`
	IDs          map[string]map[string]string `json:"ids"`
	Replayed     bool                         `json:"replayed"`
}

// ImportEvent is what catalog_import.applied carries: the import's ids and
// counts (docs/events.md).
type ImportEvent struct {
	ActionID   string                  `json:"actionId"`
	TargetMode string                  `json:"targetMode"`
	Menu       contracts.MenuSummary   `json:"menu"`
	Created    contracts.CatalogCounts `json:"created"`
}

// Event is an event the apply records in its transaction, for the event
// feed and webhooks.
type Event struct {
	Type         string
	RestaurantID string
	Data         any
}

// AppliedImport is the record of one written import: who applied which
// plan, and what the menus service created.
type AppliedImport struct {
	Applied  Applied
	Outcome  Outcome
	PlanHash string
	Mode     string
	Batch    contracts.CatalogBatch
	// Event is the import's catalog_import.applied, recorded with it.
	Event Event
}

// ApplyKey identifies one apply request for its idempotency record.
type ApplyKey struct {
	// Scope keeps keys of different clients, restaurants and operations apart.
	Scope string
	// Key is the partner's idempotencyKey.
	Key string
	// Body is the request as decoded; its canonical JSON is compared on replay.
	Body         any
	ClientID     string
	UserID       string
	RestaurantID string
	BatchID      string
}

// Outcome is what an apply did: created a new draft or changed an existing
// one. Its values are the ones stored with idempotency keys.
type Outcome int

// The outcomes of an apply.
const (
	Changed Outcome = 200
	Created Outcome = 201
)

// Stored is the answer of an apply: the first one, or the stored one again.
type Stored struct {
	Outcome  Outcome
	Data     json.RawMessage
	Replayed bool
}

// Repository keeps the applied imports and the idempotency keys of this
// service's schema.
type Repository interface {
	// Apply runs write once per (k.Scope, k.Key): inside one transaction with
	// the key's record, it stores the import write returns. A key seen
	// before answers the stored result (ErrKeyReused for another body); an
	// error from write keeps nothing.
	Apply(ctx context.Context, k ApplyKey, write func(ctx context.Context) (AppliedImport, error)) (Stored, error)
	// PendingBatch returns the batch sent earlier for k.BatchID whose outcome
	// is unknown (nil when none); ErrKeyReused when it was sent for another body.
	PendingBatch(ctx context.Context, k ApplyKey) (*contracts.CatalogBatch, error)
	// SavePending commits b as about to be sent, before the call.
	SavePending(ctx context.Context, k ApplyKey, b contracts.CatalogBatch) error
	// DropPending forgets a batch the menus service refused (it wrote nothing).
	DropPending(ctx context.Context, batchID string) error
}
