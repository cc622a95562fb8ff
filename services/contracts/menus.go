package contracts

// MenusIngestPath is the menus service's internal ingestion endpoint: an
// NDJSON body of MenuCatalog lines (one restaurant each), behind the
// ingestion token. Loading the same lines again changes nothing.
const MenusIngestPath = "/internal/v1/menus/ingest"

// MenuCatalog is one restaurant's catalog and menus as the POS side holds
// them: every row with its id, so a repeated load replaces rather than
// duplicates.
type MenuCatalog struct {
	RestaurantID string                   `json:"restaurantId"`
	Categories   []MenuCatalogCategory    `json:"categories"`
	OptionGroups []MenuCatalogOptionGroup `json:"optionGroups"`
	Items        []MenuCatalogItem        `json:"items"`
	Menus        []MenuCatalogMenu        `json:"menus"`
	// The published menus (ids of Menus), null for none.
	PosMenuID    *string `json:"posMenuId"`
	OnlineMenuID *string `json:"onlineMenuId"`
}

// MenuCatalogCategory is a catalog category.
type MenuCatalogCategory struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Visible bool   `json:"visible"`
}

// MenuCatalogOptionGroup is an option group with its options.
type MenuCatalogOptionGroup struct {
	ID            string              `json:"id"`
	Name          string              `json:"name"`
	MinSelections int                 `json:"minSelections"`
	MaxSelections int                 `json:"maxSelections"`
	Options       []MenuCatalogOption `json:"options"`
}

// MenuCatalogOption is one choice of an option group.
type MenuCatalogOption struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	PriceMinor int64  `json:"priceMinor"`
	Visible    bool   `json:"visible"`
}

// MenuCatalogItem is a catalog item; Availability is available, sold_out
// or hidden.
type MenuCatalogItem struct {
	ID                string             `json:"id"`
	CategoryID        string             `json:"categoryId"`
	Name              string             `json:"name"`
	Description       *string            `json:"description"`
	BasePriceMinor    int64              `json:"basePriceMinor"`
	Visible           bool               `json:"visible"`
	ShowInKitchen     bool               `json:"showInKitchen"`
	ProductType       string             `json:"productType"`
	Availability      string             `json:"availability"`
	OpenPrice         bool               `json:"openPrice"`
	IsAlcohol         bool               `json:"isAlcohol"`
	AlcoholPercentage *float64           `json:"alcoholPercentage"`
	Tag               *string            `json:"tag"`
	DietaryInfo       CatalogDietaryInfo `json:"dietaryInfo"`
	OptionGroupIDs    []string           `json:"optionGroupIds"`
}

// MenuCatalogMenu is a menu and its entries; an entry's category is its
// item's.
type MenuCatalogMenu struct {
	ID      string                 `json:"id"`
	Name    string                 `json:"name"`
	Entries []MenuCatalogMenuEntry `json:"entries"`
}

// MenuCatalogMenuEntry is an item on a menu, with the menu's own price when
// it has one.
type MenuCatalogMenuEntry struct {
	ItemID             string `json:"itemId"`
	PriceOverrideMinor *int64 `json:"priceOverrideMinor"`
}
