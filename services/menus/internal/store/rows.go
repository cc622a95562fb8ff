package store

// Rows of the menus schema as gorm writes them. Columns the database fills
// (version, revision, timestamps) are left out so their defaults apply.

type categoryRow struct {
	ID                    string `gorm:"column:id;primaryKey"`
	RestaurantID          string `gorm:"column:restaurant_id"`
	Name                  string `gorm:"column:name"`
	Visible               bool   `gorm:"column:visible"`
	RegulatedProductClass string `gorm:"column:regulated_product_class"`
	DiscountPolicy        string `gorm:"column:discount_policy"`
}

func (categoryRow) TableName() string { return "categories" }

type itemRow struct {
	ID                            string   `gorm:"column:id;primaryKey"`
	RestaurantID                  string   `gorm:"column:restaurant_id"`
	CategoryID                    string   `gorm:"column:category_id"`
	Name                          string   `gorm:"column:name"`
	Description                   *string  `gorm:"column:description"`
	BasePriceMinor                int64    `gorm:"column:base_price_minor"`
	Visible                       bool     `gorm:"column:visible"`
	ShowInKitchen                 bool     `gorm:"column:show_in_kitchen"`
	ProductType                   string   `gorm:"column:product_type"`
	Vegan                         bool     `gorm:"column:vegan"`
	Vegetarian                    bool     `gorm:"column:vegetarian"`
	GlutenFree                    bool     `gorm:"column:gluten_free"`
	DairyFree                     bool     `gorm:"column:dairy_free"`
	LactoseFree                   bool     `gorm:"column:lactose_free"`
	LowLactose                    bool     `gorm:"column:low_lactose"`
	EggFree                       bool     `gorm:"column:egg_free"`
	NutFree                       bool     `gorm:"column:nut_free"`
	SoyFree                       bool     `gorm:"column:soy_free"`
	Tag                           *string  `gorm:"column:tag"`
	TrackVolume                   bool     `gorm:"column:track_volume"`
	OpenPrice                     bool     `gorm:"column:open_price"`
	IsAlcohol                     bool     `gorm:"column:is_alcohol"`
	Volume                        *float64 `gorm:"column:volume"`
	Unit                          *string  `gorm:"column:unit"`
	AlcoholType                   *string  `gorm:"column:alcohol_type"`
	AlcoholPercentage             *float64 `gorm:"column:alcohol_percentage"`
	RegulatedProductClassOverride *string  `gorm:"column:regulated_product_class_override"`
	DiscountPolicyOverride        *string  `gorm:"column:discount_policy_override"`
	Availability                  string   `gorm:"column:availability"`
}

func (itemRow) TableName() string { return "items" }

type optionGroupRow struct {
	ID            string `gorm:"column:id;primaryKey"`
	RestaurantID  string `gorm:"column:restaurant_id"`
	Name          string `gorm:"column:name"`
	MinSelections int    `gorm:"column:min_selections"`
	MaxSelections int    `gorm:"column:max_selections"`
}

func (optionGroupRow) TableName() string { return "option_groups" }

type optionRow struct {
	ID            string `gorm:"column:id;primaryKey"`
	RestaurantID  string `gorm:"column:restaurant_id"`
	OptionGroupID string `gorm:"column:option_group_id"`
	Name          string `gorm:"column:name"`
	PriceMinor    int64  `gorm:"column:price_minor"`
	Visible       bool   `gorm:"column:visible"`
	Position      int    `gorm:"column:position"`
}

func (optionRow) TableName() string { return "options" }

type assignmentRow struct {
	RestaurantID  string `gorm:"column:restaurant_id"`
	ItemID        string `gorm:"column:item_id;primaryKey"`
	OptionGroupID string `gorm:"column:option_group_id;primaryKey"`
	Position      int    `gorm:"column:position"`
}

func (assignmentRow) TableName() string { return "item_option_groups" }

type productCategoryRow struct {
	ID           string `gorm:"column:id;primaryKey"`
	RestaurantID string `gorm:"column:restaurant_id"`
	Name         string `gorm:"column:name"`
}

func (productCategoryRow) TableName() string { return "product_categories" }

type productRow struct {
	ID                string `gorm:"column:id;primaryKey"`
	RestaurantID      string `gorm:"column:restaurant_id"`
	ProductCategoryID string `gorm:"column:product_category_id"`
	Name              string `gorm:"column:name"`
	Unit              string `gorm:"column:unit"`
	TrackStock        bool   `gorm:"column:track_stock"`
}

func (productRow) TableName() string { return "products" }

type comboRow struct {
	ID           string `gorm:"column:id;primaryKey"`
	RestaurantID string `gorm:"column:restaurant_id"`
	Name         string `gorm:"column:name"`
	PriceMinor   int64  `gorm:"column:price_minor"`
	Visible      bool   `gorm:"column:visible"`
}

func (comboRow) TableName() string { return "combos" }

type comboComponentRow struct {
	ComboID      string `gorm:"column:combo_id;primaryKey"`
	Position     int    `gorm:"column:position;primaryKey"`
	RestaurantID string `gorm:"column:restaurant_id"`
	ItemID       string `gorm:"column:item_id"`
	Quantity     int    `gorm:"column:quantity"`
}

func (comboComponentRow) TableName() string { return "combo_components" }

type menuRow struct {
	ID           string `gorm:"column:id;primaryKey"`
	RestaurantID string `gorm:"column:restaurant_id"`
	Name         string `gorm:"column:name"`
}

func (menuRow) TableName() string { return "menus" }

type menuCategoryRow struct {
	RestaurantID string `gorm:"column:restaurant_id"`
	MenuID       string `gorm:"column:menu_id;primaryKey"`
	CategoryID   string `gorm:"column:category_id;primaryKey"`
	Position     int    `gorm:"column:position"`
}

func (menuCategoryRow) TableName() string { return "menu_categories" }

type menuItemRow struct {
	RestaurantID       string `gorm:"column:restaurant_id"`
	MenuID             string `gorm:"column:menu_id;primaryKey"`
	ItemID             string `gorm:"column:item_id;primaryKey"`
	CategoryID         string `gorm:"column:category_id"`
	PriceOverrideMinor *int64 `gorm:"column:price_override_minor"`
}

func (menuItemRow) TableName() string { return "menu_items" }

// menuView is a menu read with its counts and publication state.
type menuView struct {
	ID            string
	RestaurantID  string
	Name          string
	Revision      int64
	IsPos         bool
	IsOnline      bool
	CategoryCount int
	ItemCount     int
}

type draftItemView struct {
	ID             string
	CategoryID     string
	Name           string
	BasePriceMinor int64
	Description    *string
	Visible        bool
	ShowInKitchen  bool
	Version        int64
	Shared         int
}
