package domain

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"partnerapi.dev/services/contracts"
)

// Bounds of the document's values (characters, not bytes).
const (
	MaxRefLength         = 64
	MaxNameLength        = 200
	MaxDescriptionLength = 2000
	// MaxCodeLength bounds short codes (productType, unit, tag, classes).
	MaxCodeLength = 64
	// MaxUnitLength bounds a product's stock unit.
	MaxUnitLength  = 32
	MaxPriceMinor  = 1_000_000_000
	MaxQuantity    = 99
	MaxPercentage  = 100
	MaxSelections  = 100
	MaxItemVolume  = 1_000_000
	maxListedInMsg = 20
)

// PlanRequest is the plan body: a target and a document.
type PlanRequest struct {
	Target   Target                    `json:"target"`
	Document contracts.CatalogDocument `json:"document"`
}

// PlanTarget describes the menu the import lands in.
type PlanTarget struct {
	Mode                  string
	MenuID                string // "" for a new draft
	MenuName              string
	PreviousCategoryCount int
	PreviousItemCount     int
}

// Plan is the outcome of validating a document against a target.
type Plan struct {
	RestaurantID string
	Valid        bool
	Hash         string
	MenuName     string
	Target       PlanTarget
	Creates      contracts.CatalogCounts
	Warnings     []Issue
	Errors       []Issue
	// Revision is the target draft's revision the plan was made against
	// ("" for a new draft).
	Revision string
	// TargetIsDraft is false when the existing target is a POS or online menu.
	TargetIsDraft bool
}

// CheckTarget refuses a request that is not a plan at all: an unknown mode,
// or a menu id missing, malformed or given with new_draft.
func CheckTarget(t Target) error {
	switch t.Mode {
	case contracts.CatalogTargetNewDraft:
		if t.MenuID != "" {
			return invalid("target.menuId is only for mode existing_draft; leave it out for new_draft.")
		}
	case contracts.CatalogTargetExistingDraft:
		if !IsUUID(t.MenuID) {
			return invalid("target.menuId must be the uuid of an inactive draft menu for mode existing_draft.")
		}
	case "":
		return invalid("target.mode is required: new_draft or existing_draft.")
	default:
		return invalid(fmt.Sprintf("target.mode %q is not supported: use new_draft or existing_draft.", t.Mode))
	}
	return nil
}

// Plan validates req for the restaurant, reading the target draft from the
// menus service for existing_draft. It writes nothing.
func (im *Importer) Plan(ctx context.Context, restaurantID string, req PlanRequest) (Plan, error) {
	if err := CheckTarget(req.Target); err != nil {
		return Plan{}, err
	}
	var target *contracts.CatalogTarget
	if req.Target.Mode == contracts.CatalogTargetExistingDraft {
		t, err := im.Menus.Target(ctx, restaurantID, req.Target.MenuID)
		if err != nil {
			return Plan{}, err
		}
		target = &t
	}
	return Evaluate(im.Settings, restaurantID, req, target), nil
}

// Evaluate is the plan itself: every rule over the whole document, every
// problem reported with its JSON Pointer, the counts and the hash. target is
// the existing draft (nil for new_draft).
func Evaluate(s Settings, restaurantID string, req PlanRequest, target *contracts.CatalogTarget) Plan {
	doc := Normalize(req.Document)
	v := &validator{s: s, doc: doc}
	p := Plan{RestaurantID: restaurantID, Target: PlanTarget{Mode: req.Target.Mode}, TargetIsDraft: true}
	if target != nil {
		p.Revision = target.Revision
		p.TargetIsDraft = target.InactiveDraft && !target.Menu.IsPosMenu && !target.Menu.IsOnlineMenu
		p.MenuName = target.Menu.Name
		p.Target.MenuID = target.Menu.MenuID
		p.Target.MenuName = target.Menu.Name
		p.Target.PreviousCategoryCount = target.Menu.CategoryCount
		p.Target.PreviousItemCount = target.Menu.ItemCount
		if !p.TargetIsDraft {
			v.fail("target_not_draft", "", "The target menu is the POS or online menu; catalog import writes only into an inactive draft. Choose another draft or plan with target mode new_draft.")
		}
	} else {
		p.MenuName = doc.Menu.Name
		p.Target.MenuName = doc.Menu.Name
	}
	v.run(target)
	p.Errors, p.Warnings = v.errors, v.warnings
	p.Valid = len(p.Errors) == 0
	p.Creates = Counts(doc, req.Target.Mode)
	p.Hash = PlanHash(restaurantID, req.Target, doc, p.Revision)
	return p
}

// Counts counts what doc creates.
func Counts(doc contracts.CatalogDocument, mode string) contracts.CatalogCounts {
	c := contracts.CatalogCounts{
		Menus: 1, MenuCategories: len(doc.MenuCategories), MenuItems: len(doc.MenuItems),
		OptionGroups: len(doc.OptionGroups), ProductCategories: len(doc.ProductCategories),
		Products: len(doc.Products), Combos: len(doc.Combos),
	}
	if mode == contracts.CatalogTargetNewDraft {
		c.NewMenus = 1
	}
	for _, g := range doc.OptionGroups {
		c.Options += len(g.Options)
	}
	for _, k := range doc.Combos {
		c.ComboComponents += len(k.Components)
	}
	return c
}

// PlanHash is the hex SHA-256 of the canonical encoding of restaurant,
// target, document and the target draft's revision: the JSON of a fixed
// struct of typed, normalized values (fields in declaration order, no maps),
// so equal inputs give equal bytes.
func PlanHash(restaurantID string, t Target, doc contracts.CatalogDocument, revision string) string {
	canon, err := json.Marshal(struct {
		RestaurantID string                    `json:"restaurantId"`
		Target       Target                    `json:"target"`
		Document     contracts.CatalogDocument `json:"document"`
		Revision     string                    `json:"revision"`
	}{strings.ToLower(restaurantID), Target{Mode: t.Mode, MenuID: strings.ToLower(t.MenuID)}, Normalize(doc), revision})
	if err != nil {
		// A document decoded from JSON always encodes again.
		panic(err)
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

// Normalize makes absent and empty lists the same, so equal documents hash
// and write alike however they spelled "nothing".
func Normalize(d contracts.CatalogDocument) contracts.CatalogDocument {
	d.ExistingMenuCategories = orEmpty(d.ExistingMenuCategories)
	d.MenuCategories = orEmpty(d.MenuCategories)
	d.MenuItems = orEmpty(d.MenuItems)
	d.OptionGroups = orEmpty(d.OptionGroups)
	d.ProductCategories = orEmpty(d.ProductCategories)
	d.Products = orEmpty(d.Products)
	d.Combos = orEmpty(d.Combos)
	items := make([]contracts.CatalogMenuItem, len(d.MenuItems))
	for i, it := range d.MenuItems {
		it.OptionGroupAssignments = orEmpty(it.OptionGroupAssignments)
		items[i] = it
	}
	d.MenuItems = items
	groups := make([]contracts.CatalogOptionGroup, len(d.OptionGroups))
	for i, g := range d.OptionGroups {
		g.Options = orEmpty(g.Options)
		groups[i] = g
	}
	d.OptionGroups = groups
	combos := make([]contracts.CatalogCombo, len(d.Combos))
	for i, k := range d.Combos {
		k.Components = orEmpty(k.Components)
		combos[i] = k
	}
	d.Combos = combos
	return d
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// IsUUID reports whether s is a uuid in its canonical textual form.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

type validator struct {
	s                Settings
	doc              contracts.CatalogDocument
	errors, warnings []Issue
}

func (v *validator) fail(code, path, msg string) {
	v.errors = append(v.errors, Issue{Code: code, Path: path, Message: msg})
}

func (v *validator) warn(code, path, msg string) {
	v.warnings = append(v.warnings, Issue{Code: code, Path: path, Message: msg})
}

// at builds a JSON Pointer from field names and indexes (no name of the
// document needs escaping).
func at(parts ...any) string {
	b := make([]byte, 0, 48)
	for _, p := range parts {
		b = append(b, '/')
		switch p := p.(type) {
		case int:
			b = strconv.AppendInt(b, int64(p), 10)
		case string:
			b = append(b, p...)
		}
	}
	return string(b)
}

// refs checks refs of one kind and records them in seen (shared by kinds
// that are one namespace, such as new and existing categories).
func (v *validator) ref(seen map[string]string, ref, path, kind string) {
	n := utf8.RuneCountInString(ref)
	switch {
	case n < 1 || n > MaxRefLength:
		v.fail("ref_invalid", path, fmt.Sprintf("ref must be 1 to %d characters.", MaxRefLength))
	case seen[ref] != "":
		v.fail("ref_duplicate", path, fmt.Sprintf("ref %q is already used by %s; each %s needs its own ref.", ref, seen[ref], kind))
	default:
		seen[ref] = path
	}
}

func (v *validator) name(s, path string) {
	if n := utf8.RuneCountInString(s); strings.TrimSpace(s) == "" || n > MaxNameLength {
		v.fail("name_invalid", path, fmt.Sprintf("name must be 1 to %d characters and not blank.", MaxNameLength))
	}
}

func (v *validator) code(s, path string, required bool) {
	if n := utf8.RuneCountInString(s); n > MaxCodeLength || (required && strings.TrimSpace(s) == "") {
		v.fail("value_invalid", path, fmt.Sprintf("must be 1 to %d characters.", MaxCodeLength))
	}
}

func (v *validator) optCode(s *string, path string) {
	if s != nil {
		v.code(*s, path, true)
	}
}

func (v *validator) price(p int64, path string) {
	if p < 0 || p > MaxPriceMinor {
		v.fail("price_out_of_range", path, fmt.Sprintf("price must be between 0 and %d minor units.", MaxPriceMinor))
	}
}

func (v *validator) limit(n, max int, path, what string) {
	if n > max {
		v.fail("limit_exceeded", path, fmt.Sprintf("%d %s exceed the limit of %d per import (see capabilities); split the document.", n, what, max))
	}
}

func (v *validator) run(target *contracts.CatalogTarget) {
	d, l := v.doc, v.s.Limits
	c := Counts(d, "")
	v.limit(c.MenuCategories, l.MenuCategories, "/menuCategories", "menu categories")
	v.limit(c.MenuItems, l.MenuItems, "/menuItems", "menu items")
	v.limit(c.OptionGroups, l.OptionGroups, "/optionGroups", "option groups")
	v.limit(c.Options, l.Options, "/optionGroups", "options in all option groups")
	v.limit(c.ProductCategories, l.ProductCategories, "/productCategories", "product categories")
	v.limit(c.Products, l.Products, "/products", "products")
	v.limit(c.Combos, l.Combos, "/combos", "combos")
	v.limit(c.ComboComponents, l.ComboComponents, "/combos", "components in all combos")

	v.ref(map[string]string{}, d.Menu.Ref, "/menu/ref", "menu")
	if target == nil || d.Menu.Name != "" {
		v.name(d.Menu.Name, "/menu/name")
	}
	if target != nil && d.Menu.Name != "" && d.Menu.Name != target.Menu.Name {
		v.warn("menu_name_ignored", "/menu/name", fmt.Sprintf("The existing draft keeps its name %q; menu.name is not applied to it.", target.Menu.Name))
	}

	categories := map[string]string{}
	onTarget := map[string]bool{}
	if target != nil {
		for _, c := range target.Categories {
			onTarget[strings.ToLower(c.CategoryID)] = true
		}
	}
	for i, e := range d.ExistingMenuCategories {
		v.ref(categories, e.Ref, at("existingMenuCategories", i, "ref"), "category")
		switch {
		case target == nil:
			v.fail("existing_category_without_draft", at("existingMenuCategories", i), "existingMenuCategories name categories of an existing draft; with target mode new_draft there are none. Remove it or plan into an existing draft.")
		case !onTarget[strings.ToLower(e.CategoryID)]:
			v.fail("category_not_on_target", at("existingMenuCategories", i, "categoryId"), "categoryId is not a category of the target draft; read the target for its categories.")
		}
	}
	used := map[string]bool{}
	for i, c := range d.MenuCategories {
		v.ref(categories, c.Ref, at("menuCategories", i, "ref"), "category")
		v.name(c.Name, at("menuCategories", i, "name"))
		v.code(c.RegulatedProductClass, at("menuCategories", i, "regulatedProductClass"), false)
		v.code(c.DiscountPolicy, at("menuCategories", i, "discountPolicy"), false)
	}

	groups := map[string]string{}
	options := map[string]string{}
	for i, g := range d.OptionGroups {
		v.ref(groups, g.Ref, at("optionGroups", i, "ref"), "option group")
		v.name(g.Name, at("optionGroups", i, "name"))
		if len(g.Options) == 0 {
			v.fail("option_group_empty", at("optionGroups", i, "options"), "An option group needs at least one option.")
		}
		switch {
		case g.MinSelections < 0 || g.MaxSelections < 1 || g.MaxSelections > MaxSelections:
			v.fail("selections_invalid", at("optionGroups", i, "maxSelections"), fmt.Sprintf("minSelections must be at least 0 and maxSelections between 1 and %d.", MaxSelections))
		case g.MinSelections > g.MaxSelections:
			v.fail("selections_invalid", at("optionGroups", i, "minSelections"), "minSelections must not exceed maxSelections.")
		case len(g.Options) > 0 && g.MinSelections > len(g.Options):
			v.fail("selections_invalid", at("optionGroups", i, "minSelections"), fmt.Sprintf("minSelections %d asks for more choices than the group's %d options.", g.MinSelections, len(g.Options)))
		}
		for j, o := range g.Options {
			v.ref(options, o.Ref, at("optionGroups", i, "options", j, "ref"), "option")
			v.name(o.Name, at("optionGroups", i, "options", j, "name"))
			v.price(o.PriceMinor, at("optionGroups", i, "options", j, "priceMinor"))
		}
	}

	items := map[string]string{}
	assigned := map[string]bool{}
	for i, it := range d.MenuItems {
		v.ref(items, it.Ref, at("menuItems", i, "ref"), "menu item")
		if _, ok := categories[it.CategoryRef]; !ok {
			v.fail("reference_unresolved", at("menuItems", i, "categoryRef"), fmt.Sprintf("categoryRef %q names no menuCategories or existingMenuCategories ref.", it.CategoryRef))
		}
		used[it.CategoryRef] = true
		v.name(it.Name, at("menuItems", i, "name"))
		v.price(it.BasePriceMinor, at("menuItems", i, "basePriceMinor"))
		if it.Description != nil && utf8.RuneCountInString(*it.Description) > MaxDescriptionLength {
			v.fail("description_too_long", at("menuItems", i, "description"), fmt.Sprintf("description must be at most %d characters.", MaxDescriptionLength))
		}
		v.optCode(it.Tag, at("menuItems", i, "tag"))
		v.code(it.ProductType, at("menuItems", i, "productType"), true)
		v.optCode(it.Unit, at("menuItems", i, "unit"))
		v.optCode(it.AlcoholType, at("menuItems", i, "alcoholType"))
		v.optCode(it.RegulatedProductClassOverride, at("menuItems", i, "regulatedProductClassOverride"))
		v.optCode(it.DiscountPolicyOverride, at("menuItems", i, "discountPolicyOverride"))
		if it.Volume != nil && (*it.Volume < 0 || *it.Volume > MaxItemVolume) {
			v.fail("value_out_of_range", at("menuItems", i, "volume"), fmt.Sprintf("volume must be between 0 and %d.", MaxItemVolume))
		}
		if it.AlcoholPercentage != nil && (*it.AlcoholPercentage < 0 || *it.AlcoholPercentage > MaxPercentage) {
			v.fail("value_out_of_range", at("menuItems", i, "alcoholPercentage"), "alcoholPercentage must be between 0 and 100.")
		}
		seenGroup, seenPos := map[string]bool{}, map[int]bool{}
		for j, a := range it.OptionGroupAssignments {
			p := at("menuItems", i, "optionGroupAssignments", j)
			if _, ok := groups[a.OptionGroupRef]; !ok {
				v.fail("reference_unresolved", p+"/optionGroupRef", fmt.Sprintf("optionGroupRef %q names no optionGroups ref.", a.OptionGroupRef))
			} else if seenGroup[a.OptionGroupRef] {
				v.fail("assignment_duplicate", p+"/optionGroupRef", fmt.Sprintf("option group %q is already assigned to this item.", a.OptionGroupRef))
			}
			if a.Position < 0 {
				v.fail("value_out_of_range", p+"/position", "position must be 0 or more.")
			} else if seenPos[a.Position] {
				v.fail("assignment_duplicate", p+"/position", fmt.Sprintf("position %d is already taken on this item; give each assignment its own position.", a.Position))
			}
			seenGroup[a.OptionGroupRef], seenPos[a.Position], assigned[a.OptionGroupRef] = true, true, true
		}
	}
	for i, c := range d.MenuCategories {
		if !used[c.Ref] {
			v.warn("menu_category_empty", at("menuCategories", i), fmt.Sprintf("No menu item uses category %q; it is created empty.", c.Ref))
		}
	}
	for i, g := range d.OptionGroups {
		if !assigned[g.Ref] {
			v.warn("option_group_unassigned", at("optionGroups", i), fmt.Sprintf("No menu item uses option group %q; it is created unassigned.", g.Ref))
		}
	}

	productCategories := map[string]string{}
	usedProductCategories := map[string]bool{}
	for i, pc := range d.ProductCategories {
		v.ref(productCategories, pc.Ref, at("productCategories", i, "ref"), "product category")
		v.name(pc.Name, at("productCategories", i, "name"))
	}
	products := map[string]string{}
	for i, p := range d.Products {
		v.ref(products, p.Ref, at("products", i, "ref"), "product")
		if _, ok := productCategories[p.ProductCategoryRef]; !ok {
			v.fail("reference_unresolved", at("products", i, "productCategoryRef"), fmt.Sprintf("productCategoryRef %q names no productCategories ref.", p.ProductCategoryRef))
		}
		usedProductCategories[p.ProductCategoryRef] = true
		v.name(p.Name, at("products", i, "name"))
		if n := utf8.RuneCountInString(p.Unit); strings.TrimSpace(p.Unit) == "" || n > MaxUnitLength {
			v.fail("value_invalid", at("products", i, "unit"), fmt.Sprintf("unit must be 1 to %d characters, e.g. kg, l or pcs.", MaxUnitLength))
		}
	}
	for i, pc := range d.ProductCategories {
		if !usedProductCategories[pc.Ref] {
			v.warn("product_category_empty", at("productCategories", i), fmt.Sprintf("No product uses product category %q; it is created empty.", pc.Ref))
		}
	}

	if len(d.Combos) > 0 && !v.s.CombosEnabled {
		v.fail("combos_disabled", "/combos", "Combos are not enabled for catalog import here (see capabilities.combosEnabled); remove them from the document.")
	}
	combos := map[string]string{}
	for i, k := range d.Combos {
		v.ref(combos, k.Ref, at("combos", i, "ref"), "combo")
		v.name(k.Name, at("combos", i, "name"))
		v.price(k.PriceMinor, at("combos", i, "priceMinor"))
		if len(k.Components) == 0 {
			v.fail("combo_empty", at("combos", i, "components"), "A combo needs at least one component.")
		}
		for j, comp := range k.Components {
			p := at("combos", i, "components", j)
			if _, ok := items[comp.MenuItemRef]; !ok {
				v.fail("reference_unresolved", p+"/menuItemRef", fmt.Sprintf("menuItemRef %q names no menuItems ref of this document.", comp.MenuItemRef))
			}
			if comp.Quantity < 1 || comp.Quantity > MaxQuantity {
				v.fail("value_out_of_range", p+"/quantity", fmt.Sprintf("quantity must be between 1 and %d.", MaxQuantity))
			}
		}
	}
}

// Summary lists issues for a message: each path and message, the first
// maxListedInMsg of them.
func Summary(issues []Issue) string {
	var b strings.Builder
	for i, is := range issues {
		if i == maxListedInMsg {
			fmt.Fprintf(&b, " …and %d more; plan the document to see them all.", len(issues)-i)
			break
		}
		if i > 0 {
			b.WriteString(" ")
		}
		p := is.Path
		if p == "" {
			p = "(document)"
		}
		fmt.Fprintf(&b, "%s: %s", p, is.Message)
	}
	return b.String()
}
