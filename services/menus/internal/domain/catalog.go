package domain

import (
	"fmt"
	"unicode/utf8"

	"github.com/google/uuid"
	"partnerapi.dev/services/contracts"
)

// CatalogRows are the rows one catalog batch creates, ids assigned.
type CatalogRows struct {
	RestaurantID      string
	MenuID            string
	Categories        []Category
	MenuCategoryIDs   []string // categories joining the menu
	Items             []Item
	Entries           []MenuEntry
	OptionGroups      []OptionGroup
	Options           []Option
	Assignments       []Assignment
	ProductCategories []ProductCategory
	Products          []Product
	Combos            []Combo
	ComboComponents   []ComboComponent
}

// Category is a catalog category.
type Category struct {
	ID                    string
	Name                  string
	Visible               bool
	RegulatedProductClass string
	DiscountPolicy        string
}

// Item is a catalog item with every field a catalog carries.
type Item struct {
	ID                            string
	CategoryID                    string
	Name                          string
	BasePriceMinor                int64
	Description                   *string
	Visible                       bool
	ShowInKitchen                 bool
	ProductType                   string
	Dietary                       contracts.CatalogDietaryInfo
	Tag                           *string
	TrackVolume                   bool
	OpenPrice                     bool
	IsAlcohol                     bool
	Volume                        *float64
	Unit                          *string
	AlcoholType                   *string
	AlcoholPercentage             *float64
	RegulatedProductClassOverride *string
	DiscountPolicyOverride        *string
	Availability                  string
}

// OptionGroup is a group of options an item may offer.
type OptionGroup struct {
	ID            string
	Name          string
	MinSelections int
	MaxSelections int
}

// Option is one choice of a group.
type Option struct {
	ID            string
	OptionGroupID string
	Name          string
	PriceMinor    int64
	Visible       bool
	Position      int
}

// Assignment attaches an option group to an item.
type Assignment struct {
	ItemID        string
	OptionGroupID string
	Position      int
}

// ProductCategory groups stock products.
type ProductCategory struct {
	ID   string
	Name string
}

// Product is a stock product.
type Product struct {
	ID                string
	ProductCategoryID string
	Name              string
	Unit              string
	TrackStock        bool
}

// Combo is a combo of items.
type Combo struct {
	ID         string
	Name       string
	PriceMinor int64
	Visible    bool
}

// ComboComponent is one item of a combo.
type ComboComponent struct {
	ComboID  string
	Position int
	ItemID   string
	Quantity int
}

// Conflicts of a catalog batch.
var (
	ErrNotInactiveDraft = conflict("The menu is no longer an inactive draft: it is the POS or the online menu. Plan the import again into an inactive draft.")
	ErrRevisionMoved    = conflict("The menu changed since the plan. Plan the import again.")
)

const maxRef = 64

// CheckBatch is the menus service's own sanity check of a batch: the
// planner validated it fully; this refuses what would break the catalog
// (unresolved refs, bad bounds) before any work.
func CheckBatch(b contracts.CatalogBatch) error {
	if err := uuid.Validate(b.BatchID); err != nil || len(b.BatchID) != 36 {
		return invalid("batchId must be a uuid.")
	}
	switch b.Target.Mode {
	case contracts.CatalogTargetNewDraft:
		if b.Target.MenuID != nil || b.Target.ExpectedRevision != nil {
			return invalid("A new_draft target has no menuId or expectedRevision.")
		}
		if err := checkName("document.menu.name", b.Document.Menu.Name); err != nil {
			return err
		}
		if len(b.Document.ExistingMenuCategories) > 0 {
			return invalid("A new draft has no existing categories; existingMenuCategories must be empty.")
		}
	case contracts.CatalogTargetExistingDraft:
		if b.Target.MenuID == nil || !IsUUID(*b.Target.MenuID) || b.Target.ExpectedRevision == nil || *b.Target.ExpectedRevision == "" {
			return invalid("An existing_draft target needs menuId (a uuid) and expectedRevision.")
		}
	default:
		return invalid("target.mode must be new_draft or existing_draft.")
	}
	d := b.Document
	if err := checkRef("document.menu.ref", d.Menu.Ref); err != nil {
		return err
	}
	categories := map[string]bool{}
	for i, c := range d.ExistingMenuCategories {
		if err := uniqueRef(categories, fmt.Sprintf("document.existingMenuCategories[%d].ref", i), c.Ref); err != nil {
			return err
		}
		if !IsUUID(c.CategoryID) {
			return invalid(fmt.Sprintf("document.existingMenuCategories[%d].categoryId must be a uuid.", i))
		}
	}
	for i, c := range d.MenuCategories {
		at := fmt.Sprintf("document.menuCategories[%d]", i)
		if err := uniqueRef(categories, at+".ref", c.Ref); err != nil {
			return err
		}
		if err := checkName(at+".name", c.Name); err != nil {
			return err
		}
	}
	groups, options := map[string]bool{}, map[string]bool{}
	for i, g := range d.OptionGroups {
		at := fmt.Sprintf("document.optionGroups[%d]", i)
		if err := uniqueRef(groups, at+".ref", g.Ref); err != nil {
			return err
		}
		if err := checkName(at+".name", g.Name); err != nil {
			return err
		}
		if g.MinSelections < 0 || g.MaxSelections < 1 || g.MaxSelections < g.MinSelections {
			return invalid(at + ": minSelections must be at least 0 and maxSelections at least 1 and not below minSelections.")
		}
		for j, o := range g.Options {
			oat := fmt.Sprintf("%s.options[%d]", at, j)
			if err := uniqueRef(options, oat+".ref", o.Ref); err != nil {
				return err
			}
			if err := checkName(oat+".name", o.Name); err != nil {
				return err
			}
			if err := checkPrice(oat+".priceMinor", o.PriceMinor); err != nil {
				return err
			}
		}
	}
	items := map[string]bool{}
	for i, it := range d.MenuItems {
		at := fmt.Sprintf("document.menuItems[%d]", i)
		if err := uniqueRef(items, at+".ref", it.Ref); err != nil {
			return err
		}
		if !categories[it.CategoryRef] {
			return invalid(at + ".categoryRef names no category of the document.")
		}
		if err := checkName(at+".name", it.Name); err != nil {
			return err
		}
		if err := checkPrice(at+".basePriceMinor", it.BasePriceMinor); err != nil {
			return err
		}
		if it.Description != nil && utf8.RuneCountInString(*it.Description) > 2000 {
			return invalid(at + ".description is longer than 2000 characters.")
		}
		if it.ProductType == "" || len(it.ProductType) > 64 {
			return invalid(at + ".productType must be 1 to 64 characters.")
		}
		if it.AlcoholPercentage != nil && (*it.AlcoholPercentage < 0 || *it.AlcoholPercentage > 100) {
			return invalid(at + ".alcoholPercentage must be between 0 and 100.")
		}
		seen := map[string]bool{}
		for j, a := range it.OptionGroupAssignments {
			if !groups[a.OptionGroupRef] || seen[a.OptionGroupRef] || a.Position < 0 {
				return invalid(fmt.Sprintf("%s.optionGroupAssignments[%d] must name an option group of the document once, at a position of 0 or more.", at, j))
			}
			seen[a.OptionGroupRef] = true
		}
	}
	productCategories, products := map[string]bool{}, map[string]bool{}
	for i, pc := range d.ProductCategories {
		at := fmt.Sprintf("document.productCategories[%d]", i)
		if err := uniqueRef(productCategories, at+".ref", pc.Ref); err != nil {
			return err
		}
		if err := checkName(at+".name", pc.Name); err != nil {
			return err
		}
	}
	for i, p := range d.Products {
		at := fmt.Sprintf("document.products[%d]", i)
		if err := uniqueRef(products, at+".ref", p.Ref); err != nil {
			return err
		}
		if !productCategories[p.ProductCategoryRef] {
			return invalid(at + ".productCategoryRef names no product category of the document.")
		}
		if err := checkName(at+".name", p.Name); err != nil {
			return err
		}
		if p.Unit == "" || len(p.Unit) > 32 {
			return invalid(at + ".unit must be 1 to 32 characters.")
		}
	}
	combos := map[string]bool{}
	for i, c := range d.Combos {
		at := fmt.Sprintf("document.combos[%d]", i)
		if err := uniqueRef(combos, at+".ref", c.Ref); err != nil {
			return err
		}
		if err := checkName(at+".name", c.Name); err != nil {
			return err
		}
		if err := checkPrice(at+".priceMinor", c.PriceMinor); err != nil {
			return err
		}
		if len(c.Components) == 0 {
			return invalid(at + ".components must name at least one item.")
		}
		for j, cc := range c.Components {
			if !items[cc.MenuItemRef] || cc.Quantity < 1 || cc.Quantity > 1000 {
				return invalid(fmt.Sprintf("%s.components[%d] must name a menu item of the document with a quantity of 1 to 1000.", at, j))
			}
		}
	}
	return nil
}

// ApplyBatch writes a checked batch in tx: the new draft or the locked
// existing draft at the expected revision, then every entity, placed on the
// menu. Its outcome is Created for a new draft, Changed for an existing one.
func ApplyBatch(tx Tx, restaurantID string, b contracts.CatalogBatch) (Outcome, contracts.CatalogBatchResult, error) {
	d := b.Document
	rows := CatalogRows{RestaurantID: restaurantID}
	outcome := Changed
	created := contracts.CatalogCounts{Menus: 1}
	if b.Target.Mode == contracts.CatalogTargetNewDraft {
		rows.MenuID = NewID()
		if err := tx.CreateMenu(restaurantID, rows.MenuID, d.Menu.Name); err != nil {
			return 0, contracts.CatalogBatchResult{}, err
		}
		outcome = Created
		created.NewMenus = 1
	} else {
		m, err := tx.LockMenu(restaurantID, *b.Target.MenuID)
		if err != nil {
			return 0, contracts.CatalogBatchResult{}, err
		}
		if !m.InactiveDraft() {
			return 0, contracts.CatalogBatchResult{}, ErrNotInactiveDraft
		}
		if m.RevisionString() != *b.Target.ExpectedRevision {
			return 0, contracts.CatalogBatchResult{}, ErrRevisionMoved
		}
		rows.MenuID = m.ID
	}
	ids := map[string]map[string]string{"menu": {d.Menu.Ref: rows.MenuID}}
	for _, k := range []string{"menuCategories", "existingMenuCategories", "menuItems", "optionGroups", "options", "productCategories", "products", "combos"} {
		ids[k] = map[string]string{}
	}
	categoryOf := map[string]string{} // category ref -> id
	if len(d.ExistingMenuCategories) > 0 {
		onMenu, err := tx.MenuCategories(rows.MenuID)
		if err != nil {
			return 0, contracts.CatalogBatchResult{}, err
		}
		for i, c := range d.ExistingMenuCategories {
			if !onMenu[c.CategoryID] {
				return 0, contracts.CatalogBatchResult{}, invalid(fmt.Sprintf("document.existingMenuCategories[%d].categoryId is not a category of the target menu.", i))
			}
			categoryOf[c.Ref] = c.CategoryID
			ids["existingMenuCategories"][c.Ref] = c.CategoryID
		}
	}
	for _, c := range d.MenuCategories {
		id := NewID()
		categoryOf[c.Ref] = id
		ids["menuCategories"][c.Ref] = id
		rows.Categories = append(rows.Categories, Category{ID: id, Name: c.Name, Visible: c.Visible,
			RegulatedProductClass: orDefault(c.RegulatedProductClass, "standard"), DiscountPolicy: orDefault(c.DiscountPolicy, "allowed")})
		rows.MenuCategoryIDs = append(rows.MenuCategoryIDs, id)
	}
	groupOf := map[string]string{}
	for _, g := range d.OptionGroups {
		id := NewID()
		groupOf[g.Ref] = id
		ids["optionGroups"][g.Ref] = id
		rows.OptionGroups = append(rows.OptionGroups, OptionGroup{ID: id, Name: g.Name, MinSelections: g.MinSelections, MaxSelections: g.MaxSelections})
		for j, o := range g.Options {
			oid := NewID()
			ids["options"][o.Ref] = oid
			rows.Options = append(rows.Options, Option{ID: oid, OptionGroupID: id, Name: o.Name, PriceMinor: o.PriceMinor, Visible: o.Visible, Position: j})
		}
	}
	itemOf := map[string]string{}
	for _, it := range d.MenuItems {
		id := NewID()
		itemOf[it.Ref] = id
		ids["menuItems"][it.Ref] = id
		cat := categoryOf[it.CategoryRef]
		rows.Items = append(rows.Items, Item{ID: id, CategoryID: cat, Name: it.Name, BasePriceMinor: it.BasePriceMinor,
			Description: it.Description, Visible: it.Visible, ShowInKitchen: it.ShowInKitchen, ProductType: it.ProductType,
			Dietary: it.DietaryInfo, Tag: it.Tag, TrackVolume: it.TrackVolume, OpenPrice: it.OpenPrice, IsAlcohol: it.IsAlcohol,
			Volume: it.Volume, Unit: it.Unit, AlcoholType: it.AlcoholType, AlcoholPercentage: it.AlcoholPercentage,
			RegulatedProductClassOverride: it.RegulatedProductClassOverride, DiscountPolicyOverride: it.DiscountPolicyOverride,
			Availability: Available})
		rows.Entries = append(rows.Entries, MenuEntry{ItemID: id, CategoryID: cat})
		for _, a := range it.OptionGroupAssignments {
			rows.Assignments = append(rows.Assignments, Assignment{ItemID: id, OptionGroupID: groupOf[a.OptionGroupRef], Position: a.Position})
		}
	}
	pcOf := map[string]string{}
	for _, pc := range d.ProductCategories {
		id := NewID()
		pcOf[pc.Ref] = id
		ids["productCategories"][pc.Ref] = id
		rows.ProductCategories = append(rows.ProductCategories, ProductCategory{ID: id, Name: pc.Name})
	}
	for _, p := range d.Products {
		id := NewID()
		ids["products"][p.Ref] = id
		rows.Products = append(rows.Products, Product{ID: id, ProductCategoryID: pcOf[p.ProductCategoryRef], Name: p.Name, Unit: p.Unit, TrackStock: p.TrackStock})
	}
	for _, c := range d.Combos {
		id := NewID()
		ids["combos"][c.Ref] = id
		rows.Combos = append(rows.Combos, Combo{ID: id, Name: c.Name, PriceMinor: c.PriceMinor, Visible: c.Visible})
		for j, cc := range c.Components {
			rows.ComboComponents = append(rows.ComboComponents, ComboComponent{ComboID: id, Position: j, ItemID: itemOf[cc.MenuItemRef], Quantity: cc.Quantity})
		}
	}
	if err := tx.InsertCatalog(rows); err != nil {
		return 0, contracts.CatalogBatchResult{}, err
	}
	m, err := tx.LockMenu(restaurantID, rows.MenuID)
	if err != nil {
		return 0, contracts.CatalogBatchResult{}, err
	}
	created.MenuCategories = len(rows.Categories)
	created.MenuItems = len(rows.Items)
	created.OptionGroups = len(rows.OptionGroups)
	created.Options = len(rows.Options)
	created.ProductCategories = len(rows.ProductCategories)
	created.Products = len(rows.Products)
	created.Combos = len(rows.Combos)
	created.ComboComponents = len(rows.ComboComponents)
	event := contracts.EventMenuUpdated
	if outcome == Created {
		event = contracts.EventMenuCreated
	}
	if err := recordMenu(tx, restaurantID, event, MenuEvent{Menu: Summary(m)}); err != nil {
		return 0, contracts.CatalogBatchResult{}, err
	}
	return outcome, contracts.CatalogBatchResult{Menu: Summary(m), Revision: m.RevisionString(), Created: created, IDs: ids}, nil
}

// Summary is a menu as the catalog contracts show it.
func Summary(m Menu) contracts.MenuSummary {
	return contracts.MenuSummary{MenuID: m.ID, Name: m.Name, IsPosMenu: m.IsPos, IsOnlineMenu: m.IsOnline, CategoryCount: m.CategoryCount, ItemCount: m.ItemCount}
}

// NewID returns a new random uuid.
func NewID() string { return uuid.NewString() }

// IsUUID reports whether s is a uuid in its canonical 36-character form.
func IsUUID(s string) bool { return len(s) == 36 && uuid.Validate(s) == nil }

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func checkRef(at, ref string) error {
	if n := utf8.RuneCountInString(ref); n < 1 || n > maxRef {
		return invalid(at + " must be 1 to 64 characters.")
	}
	return nil
}

func uniqueRef(seen map[string]bool, at, ref string) error {
	if err := checkRef(at, ref); err != nil {
		return err
	}
	if seen[ref] {
		return invalid(at + " repeats a ref of the same kind; refs must be unique.")
	}
	seen[ref] = true
	return nil
}

func checkName(at, name string) error {
	if n := utf8.RuneCountInString(name); n < 1 || n > 200 {
		return invalid(at + " must be 1 to 200 characters.")
	}
	return nil
}

func checkPrice(at string, p int64) error {
	if p < 0 || p > 1_000_000_000 {
		return invalid(at + " must be between 0 and 1000000000.")
	}
	return nil
}
