package domain

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"partnerapi.dev/services/contracts"
)

// MaxAddItems bounds one add-items request.
const MaxAddItems = 50

// ItemChanges are the reviewed fields a draft-item edit may change; nil
// leaves a field as it is (DescriptionSet tells a null description from
// an absent one).
type ItemChanges struct {
	Name           *string
	BasePriceMinor *int64
	Description    *string
	DescriptionSet bool
	Visible        *bool
	ShowInKitchen  *bool
}

// Empty reports whether the changes change nothing.
func (c ItemChanges) Empty() bool {
	return c.Name == nil && c.BasePriceMinor == nil && !c.DescriptionSet && c.Visible == nil && c.ShowInKitchen == nil
}

// Check refuses changes out of bounds.
func (c ItemChanges) Check() error {
	if c.Empty() {
		return invalid("changes is empty; give at least one of name, basePriceMinor, description, visible, showInKitchen.")
	}
	if c.Name != nil {
		if err := checkName("changes.name", *c.Name); err != nil {
			return err
		}
	}
	if c.BasePriceMinor != nil {
		if err := checkPrice("changes.basePriceMinor", *c.BasePriceMinor); err != nil {
			return err
		}
	}
	if c.Description != nil && utf8.RuneCountInString(*c.Description) > 2000 {
		return invalid("changes.description is longer than 2000 characters.")
	}
	return nil
}

// CheckMenuName checks a new menu's name.
func CheckMenuName(name string) error { return checkName("name", name) }

// CreateMenu creates an empty inactive draft.
func CreateMenu(tx Tx, restaurantID, name string) (Menu, error) {
	id := NewID()
	if err := tx.CreateMenu(restaurantID, id, name); err != nil {
		return Menu{}, err
	}
	m, err := tx.LockMenu(restaurantID, id)
	if err != nil {
		return Menu{}, err
	}
	return m, recordMenu(tx, restaurantID, contracts.EventMenuCreated, MenuEvent{Menu: Summary(m)})
}

// AddItems asks to put existing catalog items on a draft reviewed at the
// expected counts.
type AddItems struct {
	MenuID                string
	ItemIDs               []string
	ExpectedCategoryCount int
	ExpectedItemCount     int
}

// Check refuses a request out of bounds before any work.
func (a AddItems) Check() error {
	if len(a.ItemIDs) < 1 || len(a.ItemIDs) > MaxAddItems {
		return invalid(fmt.Sprintf("catalogItemIds must give 1 to %d item ids.", MaxAddItems))
	}
	seen := map[string]bool{}
	for i, id := range a.ItemIDs {
		if !IsUUID(id) {
			return invalid(fmt.Sprintf("catalogItemIds[%d] must be a uuid.", i))
		}
		if seen[id] {
			return invalid(fmt.Sprintf("catalogItemIds[%d] gives item %s again; give each item once.", i, id))
		}
		seen[id] = true
	}
	return checkCounts(a.ExpectedCategoryCount, a.ExpectedItemCount)
}

// AddMenuItems puts the items on the draft, their categories joining it
// when they were not on it; it answers the menu after and the added ids.
func AddMenuItems(tx Tx, restaurantID string, a AddItems) (Menu, []string, error) {
	m, err := tx.LockMenu(restaurantID, a.MenuID)
	if err != nil {
		return Menu{}, nil, err
	}
	if !m.InactiveDraft() {
		return Menu{}, nil, errPublished(m)
	}
	if err := expectCounts(m, a.ExpectedCategoryCount, a.ExpectedItemCount); err != nil {
		return Menu{}, nil, err
	}
	categoryOf, err := tx.CatalogItems(restaurantID, a.ItemIDs)
	if err != nil {
		return Menu{}, nil, err
	}
	var unknown []string
	for _, id := range a.ItemIDs {
		if _, ok := categoryOf[id]; !ok {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		return Menu{}, nil, invalid("These items are not in the restaurant's catalog: " + strings.Join(unknown, ", ") + ".")
	}
	already, err := tx.OnMenu(m.ID, a.ItemIDs)
	if err != nil {
		return Menu{}, nil, err
	}
	if len(already) > 0 {
		slices.Sort(already)
		return Menu{}, nil, conflict("These items are already on the menu: " + strings.Join(already, ", ") + ". Remove them from the request.")
	}
	onMenu, err := tx.MenuCategories(m.ID)
	if err != nil {
		return Menu{}, nil, err
	}
	var joining []string
	entries := make([]MenuEntry, len(a.ItemIDs))
	for i, id := range a.ItemIDs {
		c := categoryOf[id]
		if !onMenu[c] {
			onMenu[c] = true
			joining = append(joining, c)
		}
		entries[i] = MenuEntry{ItemID: id, CategoryID: c}
	}
	if err := tx.AddMenuCategories(restaurantID, m.ID, joining); err != nil {
		return Menu{}, nil, err
	}
	if err := tx.AddMenuItems(restaurantID, m.ID, entries); err != nil {
		return Menu{}, nil, err
	}
	m, err = tx.LockMenu(restaurantID, m.ID)
	if err != nil {
		return Menu{}, nil, err
	}
	return m, a.ItemIDs, recordMenu(tx, restaurantID, contracts.EventMenuUpdated, MenuEvent{Menu: Summary(m), ItemIDs: a.ItemIDs})
}

// EditItem applies reviewed changes to one item of a draft, inspected at
// expectedVersion; it answers the item before and after.
func EditItem(tx Tx, restaurantID, menuID, itemID, expectedVersion string, c ItemChanges) (before, after DraftItem, err error) {
	m, err := tx.LockMenu(restaurantID, menuID)
	if err != nil {
		return before, after, err
	}
	before, shared, err := tx.LockItem(restaurantID, menuID, itemID)
	if err != nil {
		return before, after, err
	}
	if !m.InactiveDraft() {
		return before, after, errPublished(m)
	}
	if shared > 0 {
		return before, after, conflict(fmt.Sprintf("The item is also on %d other menu(s); it can be edited only on a draft that is its only menu.", shared))
	}
	if before.VersionString() != expectedVersion {
		return before, after, conflict(fmt.Sprintf("The item changed since it was inspected (its version is now %s). Inspect it again and review the change.", before.VersionString()))
	}
	after, err = tx.UpdateItem(restaurantID, itemID, c)
	if err != nil {
		return before, after, err
	}
	return before, after, recordMenu(tx, restaurantID, contracts.EventMenuUpdated, MenuEvent{Menu: Summary(m), ItemIDs: []string{after.ID}})
}

// Publication is which published menu a set-menu operation chooses.
type Publication int

// The two published menus.
const (
	POS Publication = iota
	Online
)

// ExpectedCurrentField is the body field that names the menu a set-menu
// operation expects to replace.
func (p Publication) ExpectedCurrentField() string {
	if p == Online {
		return "expectedCurrentOnlineMenuId"
	}
	return "expectedCurrentPosMenuId"
}

// SetMenu asks to publish a menu reviewed at the expected counts, replacing
// the expected current one.
type SetMenu struct {
	Publication           Publication
	MenuID                string
	ExpectedCategoryCount int
	ExpectedItemCount     int
	ExpectedCurrent       *string
}

// Check refuses a request out of bounds before any work.
func (s SetMenu) Check() error {
	if !IsUUID(s.MenuID) {
		return invalid("menuId must be a uuid.")
	}
	if s.ExpectedCurrent != nil && !IsUUID(*s.ExpectedCurrent) {
		return invalid(s.Publication.ExpectedCurrentField() + " must be a uuid or null.")
	}
	return checkCounts(s.ExpectedCategoryCount, s.ExpectedItemCount)
}

// checkCounts refuses a negative expected count, naming its field.
func checkCounts(categories, items int) error {
	switch {
	case categories < 0:
		return invalid("expectedCategoryCount cannot be negative.")
	case items < 0:
		return invalid("expectedItemCount cannot be negative.")
	}
	return nil
}

// Publish makes the menu the POS or online menu and answers it with the
// menu it replaced (itself when it was already current, nil for none).
func Publish(tx Tx, restaurantID string, s SetMenu) (Menu, *string, error) {
	sel, err := tx.LockSelection(restaurantID)
	if err != nil {
		return Menu{}, nil, err
	}
	m, err := tx.LockMenu(restaurantID, s.MenuID)
	if err != nil {
		return Menu{}, nil, err
	}
	current, what := sel.PosMenuID, "POS"
	if s.Publication == Online {
		current, what = sel.OnlineMenuID, "online"
	}
	if !sameID(current, s.ExpectedCurrent) {
		now := "none"
		if current != nil {
			now = *current
		}
		return Menu{}, nil, conflict(fmt.Sprintf("The current %s menu changed since review: it is now %s. Review again.", what, now))
	}
	if err := expectCounts(m, s.ExpectedCategoryCount, s.ExpectedItemCount); err != nil {
		return Menu{}, nil, err
	}
	if s.Publication == Online && m.ItemCount == 0 {
		return Menu{}, nil, conflict("The menu has no items; an empty menu cannot be the online menu.")
	}
	changed := current == nil || *current != m.ID
	if changed {
		if s.Publication == POS {
			err = tx.SetPosMenu(restaurantID, m.ID)
		} else {
			err = tx.SetOnlineMenu(restaurantID, m.ID)
		}
		if err != nil {
			return Menu{}, nil, err
		}
	}
	m, err = tx.LockMenu(restaurantID, m.ID)
	if err != nil || !changed {
		return m, current, err
	}
	publication := "pos"
	if s.Publication == Online {
		publication = "online"
	}
	return m, current, recordMenu(tx, restaurantID, contracts.EventMenuPublished, PublishedEvent{Menu: Summary(m), Publication: publication, ReplacedMenuID: current})
}

func sameID(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return strings.EqualFold(*a, *b)
}

func expectCounts(m Menu, categories, items int) error {
	if m.CategoryCount != categories || m.ItemCount != items {
		return conflict(fmt.Sprintf("The menu changed since review: it has %d categories and %d items, not %d and %d. Review it again.",
			m.CategoryCount, m.ItemCount, categories, items))
	}
	return nil
}

func errPublished(m Menu) error {
	what := "the POS menu"
	switch {
	case m.IsPos && m.IsOnline:
		what = "the POS and the online menu"
	case m.IsOnline:
		what = "the online menu"
	}
	return conflict("The menu is no longer an inactive draft: it is " + what + ". Only inactive drafts can be changed.")
}
