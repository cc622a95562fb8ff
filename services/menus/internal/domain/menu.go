// Package domain holds the menus service's rules: what a menu, a catalog item
// and a draft are, which changes each state allows, and what a conflict
// means. It declares the repository it needs (Reader, Tx) and the kind of
// every error (pkg/fault); it imports neither Fiber nor gorm.
package domain

import (
	"context"
	"encoding/json"
	"strconv"

	"partnerapi.dev/pkg/fault"
	"partnerapi.dev/services/contracts"
)

// Menu is a menu with its publication state and counts.
type Menu struct {
	ID            string
	RestaurantID  string
	Name          string
	IsPos         bool
	IsOnline      bool
	CategoryCount int
	ItemCount     int
	Revision      int64
}

// InactiveDraft reports whether the menu is neither the POS nor the online
// menu: only such a menu takes new items, edits and catalog imports.
func (m Menu) InactiveDraft() bool { return !m.IsPos && !m.IsOnline }

// RevisionString is the menu's revision as the wire shows it (opaque).
func (m Menu) RevisionString() string { return strconv.FormatInt(m.Revision, 10) }

// Availability values of an item.
const (
	Available = "available"
	SoldOut   = "sold_out"
	Hidden    = "hidden"
)

// Price sources of a listed item.
const (
	PriceMenuOverride = "menu_override"
	PriceBase         = "base_price"
)

// ListedItem is one item of a menu listing.
type ListedItem struct {
	ID                  string
	Name                string
	Description         *string
	CategoryID          string
	CategoryName        string
	EffectivePriceMinor int64
	BasePriceMinor      int64
	PriceSource         string
	Availability        string
	ProductType         string
	OpenPrice           bool
}

// ItemFilter selects one page of a menu's items, ordered by item id.
type ItemFilter struct {
	RestaurantID string
	MenuID       string
	After        string // item id; "" from the start
	Availability string // "" for any
	Limit        int
}

// ItemPage is one page of items; Next is the last id when more follow.
type ItemPage struct {
	Items []ListedItem
	Next  *string
}

// DraftItem is the editable part of a catalog item.
type DraftItem struct {
	ID             string
	CategoryID     string
	Name           string
	BasePriceMinor int64
	Description    *string
	Visible        bool
	ShowInKitchen  bool
	Version        int64
}

// VersionString is the item's version as the wire shows it (opaque).
func (d DraftItem) VersionString() string { return "v" + strconv.FormatInt(d.Version, 10) }

// EditTarget is one item of a menu as an editor sees it.
type EditTarget struct {
	Menu Menu
	Item DraftItem
	// SharedMenuCount counts the other menus the item is on.
	SharedMenuCount int
}

// CanEdit reports whether the item may be edited through this menu: the menu
// is an inactive draft and no other menu shows the item.
func (t EditTarget) CanEdit() bool { return t.Menu.InactiveDraft() && t.SharedMenuCount == 0 }

// Selection is the restaurant's published menus.
type Selection struct {
	PosMenuID    *string
	OnlineMenuID *string
}

// TargetCategory is a category on a menu with its item count.
type TargetCategory struct {
	ID        string
	Name      string
	ItemCount int
}

// CatalogTarget is a menu as catalog import sees it.
type CatalogTarget struct {
	Menu       Menu
	Categories []TargetCategory
}

// Reader answers the read operations.
type Reader interface {
	Menus(ctx context.Context, restaurantID string) ([]Menu, Selection, error)
	// Menu returns ErrNotFound for a menu not of the restaurant.
	Menu(ctx context.Context, restaurantID, menuID string) (Menu, error)
	Items(ctx context.Context, f ItemFilter) (ItemPage, error)
	EditTarget(ctx context.Context, restaurantID, menuID, itemID string) (EditTarget, error)
	CatalogTarget(ctx context.Context, restaurantID, menuID string) (CatalogTarget, error)
}

// WriteKey makes a write idempotent: the scope (caller, restaurant,
// operation), the caller's key and the request whose canonical form is
// compared on a repeat.
type WriteKey struct {
	Scope string
	Key   string
	Body  any
}

// Outcome is what a write did: changed what was there, or created
// something new. Its values are the ones stored with idempotency keys.
type Outcome int

// The outcomes of a write.
const (
	Changed Outcome = 200
	Created Outcome = 201
)

// Answer is what a write answers, stored with its key.
type Answer struct {
	Outcome  Outcome
	Data     json.RawMessage
	Replayed bool
}

// WriteFunc performs one write in tx and returns its outcome and the data
// to answer (and to store with the key).
type WriteFunc func(tx Tx) (Outcome, any, error)

// Repository is the menus service's storage.
type Repository interface {
	Reader
	// Write runs fn in one transaction together with the key's record: a
	// repeat of the key with the same body answers the stored answer
	// (Replayed) and writes nothing; with another body ErrKeyReused.
	Write(ctx context.Context, key WriteKey, fn WriteFunc) (Answer, error)
	// Ingest stores restaurants' catalogs and menus as given (creating or
	// replacing by id), each restaurant in its own transaction.
	Ingest(ctx context.Context, catalogs []Snapshot) error
}

// Tx is what a write may do inside its transaction. Lock* methods take the
// row lock that makes concurrent writers of the same thing wait, then
// recheck.
type Tx interface {
	CreateMenu(restaurantID, menuID, name string) error
	// LockMenu locks the menu row and returns it with its counts and state;
	// ErrNotFound when the restaurant has no such menu.
	LockMenu(restaurantID, menuID string) (Menu, error)
	// LockSelection locks (creating it empty if needed) the restaurant's
	// selection row.
	LockSelection(restaurantID string) (Selection, error)
	SetPosMenu(restaurantID, menuID string) error
	SetOnlineMenu(restaurantID, menuID string) error
	// CatalogItems returns, for the ids that are items of the restaurant,
	// their category id.
	CatalogItems(restaurantID string, ids []string) (map[string]string, error)
	// OnMenu returns which of ids are already on the menu.
	OnMenu(menuID string, ids []string) ([]string, error)
	// MenuCategories returns the ids of the categories on the menu.
	MenuCategories(menuID string) (map[string]bool, error)
	AddMenuCategories(restaurantID, menuID string, categoryIDs []string) error
	AddMenuItems(restaurantID, menuID string, entries []MenuEntry) error
	// LockItem locks the catalog item (of an entry of the menu) and counts
	// the other menus showing it; ErrNotFound when it is not on the menu.
	LockItem(restaurantID, menuID, itemID string) (DraftItem, int, error)
	UpdateItem(restaurantID, itemID string, c ItemChanges) (DraftItem, error)
	InsertCatalog(rows CatalogRows) error
	// Record records e in the service's outbox, in this transaction; a
	// write calls it as its last step.
	Record(e Event) error
}

// Event is a change partners are told about (docs/events.md).
type Event struct {
	Type         string
	RestaurantID string
	Data         any
}

// MenuEvent is what menu.created and menu.updated carry: the menu's ids
// and counts after the change.
type MenuEvent struct {
	Menu contracts.MenuSummary `json:"menu"`
	// ItemIDs are the catalog items added or edited (menu.updated by an
	// edit of the menu's items).
	ItemIDs []string `json:"itemIds,omitempty"`
}

// PublishedEvent is what menu.published carries.
type PublishedEvent struct {
	Menu contracts.MenuSummary `json:"menu"`
	// Publication is "pos" or "online".
	Publication string `json:"publication"`
	// ReplacedMenuID is the menu published before; null when none was.
	ReplacedMenuID *string `json:"replacedMenuId"`
}

func recordMenu(tx Tx, restaurantID, typ string, e any) error {
	return tx.Record(Event{Type: typ, RestaurantID: restaurantID, Data: e})
}

// MenuEntry is an item placed on a menu in a category.
type MenuEntry struct {
	ItemID             string
	CategoryID         string
	PriceOverrideMinor *int64
}

// Errors every operation may answer.
var (
	ErrNotFound  = fault.New(fault.NotFound, "not found")
	ErrKeyReused = fault.New(fault.Conflict, "This idempotencyKey was already used with a different request body; use a new key for a new request.")
)

func invalid(msg string) error  { return fault.New(fault.Invalid, msg) }
func conflict(msg string) error { return fault.New(fault.Conflict, msg) }

// Snapshot is one restaurant's catalog and menus to ingest.
type Snapshot = contracts.MenuCatalog
