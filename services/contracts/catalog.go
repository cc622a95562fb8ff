package contracts

// The catalog-import service plans a partner's catalog document and writes
// it through the menus service's internal catalog API. Both read these
// types: the document as the partner sends it, the menu as the importer
// sees it, and the create-only batch.

// MenusCatalogTargetPath answers GET with a menu as catalog import sees it
// (CatalogTarget). The request carries the gateway's signed internal context,
// forwarded unchanged by the catalog-import service.
const MenusCatalogTargetPath = "/internal/v1/restaurants/{restaurantId}/catalog-targets/{menuId}"

// MenusCatalogBatchPath takes a CatalogBatch (POST) and answers a
// CatalogBatchResult: 201 when the batch made a new draft, 200 when it wrote
// into an existing one, the same answer again for a batch id already written.
const MenusCatalogBatchPath = "/internal/v1/restaurants/{restaurantId}/catalog-batches"

// Catalog import target modes.
const (
	CatalogTargetNewDraft      = "new_draft"
	CatalogTargetExistingDraft = "existing_draft"
)

// CatalogDocument is the partner's catalog import document. Every element
// has a ref (1–64 characters, unique per kind) that other elements use to
// point at it and that the answer maps to the created id.
type CatalogDocument struct {
	Menu                   CatalogMenu               `json:"menu"`
	ExistingMenuCategories []CatalogExistingCategory `json:"existingMenuCategories"`
	MenuCategories         []CatalogMenuCategory     `json:"menuCategories"`
	MenuItems              []CatalogMenuItem         `json:"menuItems"`
	OptionGroups           []CatalogOptionGroup      `json:"optionGroups"`
	ProductCategories      []CatalogProductCategory  `json:"productCategories"`
	Products               []CatalogProduct          `json:"products"`
	Combos                 []CatalogCombo            `json:"combos"`
}

// CatalogMenu names the menu: the new draft's name, or a ref for the
// existing draft.
type CatalogMenu struct {
	Ref  string `json:"ref"`
	Name string `json:"name"`
}

// CatalogExistingCategory is a category already on the target draft that
// new items may use (categoryRef).
type CatalogExistingCategory struct {
	Ref        string `json:"ref"`
	CategoryID string `json:"categoryId"`
}

// CatalogMenuCategory is a new category of the menu.
type CatalogMenuCategory struct {
	Ref                   string `json:"ref"`
	Name                  string `json:"name"`
	Visible               bool   `json:"visible"`
	RegulatedProductClass string `json:"regulatedProductClass"`
	DiscountPolicy        string `json:"discountPolicy"`
}

// CatalogDietaryInfo holds the dietary flags of an item.
type CatalogDietaryInfo struct {
	Vegan       bool `json:"vegan"`
	Vegetarian  bool `json:"vegetarian"`
	GlutenFree  bool `json:"gluten-free"`
	DairyFree   bool `json:"dairy-free"`
	LactoseFree bool `json:"lactose-free"`
	LowLactose  bool `json:"low-lactose"`
	EggFree     bool `json:"egg-free"`
	NutFree     bool `json:"nut-free"`
	SoyFree     bool `json:"soy-free"`
}

// CatalogMenuItem is a new item of the restaurant's catalog, placed on the
// menu in the category categoryRef names (a new or an existing category).
type CatalogMenuItem struct {
	Ref                           string                         `json:"ref"`
	CategoryRef                   string                         `json:"categoryRef"`
	Name                          string                         `json:"name"`
	BasePriceMinor                int64                          `json:"basePriceMinor"`
	Description                   *string                        `json:"description"`
	Visible                       bool                           `json:"visible"`
	DietaryInfo                   CatalogDietaryInfo             `json:"dietaryInfo"`
	Tag                           *string                        `json:"tag"`
	ProductType                   string                         `json:"productType"`
	ShowInKitchen                 bool                           `json:"showInKitchen"`
	TrackVolume                   bool                           `json:"trackVolume"`
	OpenPrice                     bool                           `json:"openPrice"`
	IsAlcohol                     bool                           `json:"isAlcohol"`
	Volume                        *float64                       `json:"volume"`
	Unit                          *string                        `json:"unit"`
	AlcoholType                   *string                        `json:"alcoholType"`
	AlcoholPercentage             *float64                       `json:"alcoholPercentage"`
	RegulatedProductClassOverride *string                        `json:"regulatedProductClassOverride"`
	DiscountPolicyOverride        *string                        `json:"discountPolicyOverride"`
	OptionGroupAssignments        []CatalogOptionGroupAssignment `json:"optionGroupAssignments"`
}

// CatalogOptionGroupAssignment attaches an option group to an item.
type CatalogOptionGroupAssignment struct {
	OptionGroupRef string `json:"optionGroupRef"`
	Position       int    `json:"position"`
}

// CatalogOptionGroup is a new option group with its options.
type CatalogOptionGroup struct {
	Ref           string          `json:"ref"`
	Name          string          `json:"name"`
	MinSelections int             `json:"minSelections"`
	MaxSelections int             `json:"maxSelections"`
	Options       []CatalogOption `json:"options"`
}

// CatalogOption is one choice of an option group; its ref is unique among
// all options of the document.
type CatalogOption struct {
	Ref        string `json:"ref"`
	Name       string `json:"name"`
	PriceMinor int64  `json:"priceMinor"`
	Visible    bool   `json:"visible"`
}

// CatalogProductCategory groups stock products.
type CatalogProductCategory struct {
	Ref  string `json:"ref"`
	Name string `json:"name"`
}

// CatalogProduct is a stock product.
type CatalogProduct struct {
	Ref                string `json:"ref"`
	ProductCategoryRef string `json:"productCategoryRef"`
	Name               string `json:"name"`
	Unit               string `json:"unit"`
	TrackStock         bool   `json:"trackStock"`
}

// CatalogCombo is a combo of menu items of the same document.
type CatalogCombo struct {
	Ref        string                  `json:"ref"`
	Name       string                  `json:"name"`
	PriceMinor int64                   `json:"priceMinor"`
	Visible    bool                    `json:"visible"`
	Components []CatalogComboComponent `json:"components"`
}

// CatalogComboComponent is one item of a combo.
type CatalogComboComponent struct {
	MenuItemRef string `json:"menuItemRef"`
	Quantity    int    `json:"quantity"`
}

// MenuSummary is a menu with its publication state and counts (the
// contract's Menu in naming set A; the public services rename it for set B).
type MenuSummary struct {
	MenuID        string `json:"menuId"`
	Name          string `json:"name"`
	IsPosMenu     bool   `json:"isPosMenu"`
	IsOnlineMenu  bool   `json:"isOnlineMenu"`
	CategoryCount int    `json:"categoryCount"`
	ItemCount     int    `json:"itemCount"`
}

// CatalogTarget is a menu as catalog import sees it.
type CatalogTarget struct {
	Menu MenuSummary `json:"menu"`
	// Revision changes on every change to the menu or its entries.
	Revision string `json:"revision"`
	// InactiveDraft is true when the menu is neither the POS nor the online
	// menu: only then can it receive catalog entities.
	InactiveDraft bool                    `json:"inactiveDraft"`
	Categories    []CatalogTargetCategory `json:"categories"`
}

// CatalogTargetCategory is a category on the menu with its item count.
type CatalogTargetCategory struct {
	CategoryID string `json:"categoryId"`
	Name       string `json:"name"`
	ItemCount  int    `json:"itemCount"`
}

// CatalogBatchTarget says where a batch writes: a new inactive draft, or an
// existing inactive draft still at ExpectedRevision.
type CatalogBatchTarget struct {
	Mode             string  `json:"mode"`
	MenuID           *string `json:"menuId"`
	ExpectedRevision *string `json:"expectedRevision"`
}

// CatalogBatch is a create-only write of a planned document, in one
// transaction. BatchID (a uuid) is the batch's identity: a batch id already
// written answers the stored result and writes nothing; the same id with
// another body is a conflict.
type CatalogBatch struct {
	BatchID  string             `json:"batchId"`
	Target   CatalogBatchTarget `json:"target"`
	Document CatalogDocument    `json:"document"`
}

// CatalogCounts counts the entities a document creates.
type CatalogCounts struct {
	Menus             int `json:"menus"`
	NewMenus          int `json:"newMenus"`
	MenuCategories    int `json:"menuCategories"`
	MenuItems         int `json:"menuItems"`
	OptionGroups      int `json:"optionGroups"`
	Options           int `json:"options"`
	ProductCategories int `json:"productCategories"`
	Products          int `json:"products"`
	Combos            int `json:"combos"`
	ComboComponents   int `json:"comboComponents"`
}

// CatalogBatchResult is what a batch wrote. IDs maps each kind (menu,
// menuCategories, existingMenuCategories, menuItems, optionGroups, options,
// productCategories, products, combos) from the document's refs to ids.
type CatalogBatchResult struct {
	Menu     MenuSummary                  `json:"menu"`
	Revision string                       `json:"revision"`
	Created  CatalogCounts                `json:"created"`
	IDs      map[string]map[string]string `json:"ids"`
	Replayed bool                         `json:"replayed"`
}
