package api_test

import (
	"encoding/json"
)

// The answers of the catalog import API as the tests read them (naming set
// A unless named B).

type limits struct {
	MenuCategories    int64 `json:"menuCategories"`
	MenuItems         int64 `json:"menuItems"`
	OptionGroups      int64 `json:"optionGroups"`
	Options           int64 `json:"options"`
	ProductCategories int64 `json:"productCategories"`
	Products          int64 `json:"products"`
	Combos            int64 `json:"combos"`
	ComboComponents   int64 `json:"comboComponents"`
}

type capabilities struct {
	RestaurantID  string `json:"restaurantId"`
	CombosEnabled bool   `json:"combosEnabled"`
	Limits        limits `json:"limits"`
}

type menuSummary struct {
	MenuID        string `json:"menuId"`
	Name          string `json:"name"`
	IsPosMenu     bool   `json:"isPosMenu"`
	IsOnlineMenu  bool   `json:"isOnlineMenu"`
	CategoryCount int64  `json:"categoryCount"`
	ItemCount     int64  `json:"itemCount"`
}

// counts is what a plan creates and an apply created.
type counts struct {
	Menus             int64 `json:"menus"`
	NewMenus          int64 `json:"newMenus"`
	MenuCategories    int64 `json:"menuCategories"`
	MenuItems         int64 `json:"menuItems"`
	OptionGroups      int64 `json:"optionGroups"`
	Options           int64 `json:"options"`
	ProductCategories int64 `json:"productCategories"`
	Products          int64 `json:"products"`
	Combos            int64 `json:"combos"`
	ComboComponents   int64 `json:"comboComponents"`
}

type issue struct {
	Code    string `json:"code"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

type planTarget struct {
	Mode                  string  `json:"mode"`
	MenuID                *string `json:"menuId"`
	MenuName              string  `json:"menuName"`
	PreviousCategoryCount int64   `json:"previousCategoryCount"`
	PreviousItemCount     int64   `json:"previousItemCount"`
}

type planAnswer struct {
	RestaurantID string     `json:"restaurantId"`
	Valid        bool       `json:"valid"`
	PlanHash     string     `json:"planHash"`
	MenuName     string     `json:"menuName"`
	Target       planTarget `json:"target"`
	Creates      counts     `json:"creates"`
	Warnings     []issue    `json:"warnings"`
	Errors       []issue    `json:"errors"`
}

// applied is an apply's answer; ids maps each kind from the document's
// refs to ids.
type applied struct {
	ActionID     string                       `json:"actionId"`
	RestaurantID string                       `json:"restaurantId"`
	Menu         menuSummary                  `json:"menu"`
	Created      counts                       `json:"created"`
	IDs          map[string]map[string]string `json:"ids"`
	Replayed     bool                         `json:"replayed"`
}

type targetCategory struct {
	CategoryID string `json:"categoryId"`
	Name       string `json:"name"`
	ItemCount  int64  `json:"itemCount"`
}

type target struct {
	RestaurantID          string           `json:"restaurantId"`
	Menu                  menuSummary      `json:"menu"`
	CanAddCatalogEntities bool             `json:"canAddCatalogEntities"`
	Categories            []targetCategory `json:"categories"`
}

// importEvent is the data of catalog_import.applied.
type importEvent struct {
	ActionID   string      `json:"actionId"`
	TargetMode string      `json:"targetMode"`
	Menu       menuSummary `json:"menu"`
	Created    counts      `json:"created"`
}

// planB is a plan in naming set B; its target is read with strict.
type planB struct {
	Valid    bool            `json:"valid"`
	PlanHash string          `json:"planHash"`
	Target   json.RawMessage `json:"target"`
	Errors   []issue         `json:"errors"`
}

// planTargetB is every field of a set-B plan's target.
type planTargetB struct {
	Mode                  string  `json:"mode"`
	MenuPublicID          *string `json:"menuPublicId"`
	MenuName              string  `json:"menuName"`
	PreviousCategoryCount int64   `json:"previousCategoryCount"`
	PreviousItemCount     int64   `json:"previousItemCount"`
}

type menuB struct {
	MenuPublicID string `json:"menuPublicId"`
	ActiveForPos bool   `json:"activeForPos"`
}

type appliedB struct {
	Menu menuB                        `json:"menu"`
	IDs  map[string]map[string]string `json:"ids"`
}

// importTarget is a plan's or apply's target in naming set A.
type importTarget struct {
	Mode   string `json:"mode"`
	MenuID string `json:"menuId,omitempty"`
}

type planRequest struct {
	Target   any `json:"target"`
	Document any `json:"document"`
}

type applyRequest struct {
	Target           any    `json:"target"`
	Document         any    `json:"document"`
	ExpectedPlanHash string `json:"expectedPlanHash"`
	IdempotencyKey   string `json:"idempotencyKey"`
	Confirmed        bool   `json:"confirmed"`
}
