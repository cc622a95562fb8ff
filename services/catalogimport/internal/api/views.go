package api

import (
	"partnerapi.dev/services/catalogimport/internal/domain"
	"partnerapi.dev/services/contracts"
)

type limitsView struct {
	MenuCategories    int `json:"menuCategories"`
	MenuItems         int `json:"menuItems"`
	OptionGroups      int `json:"optionGroups"`
	Options           int `json:"options"`
	ProductCategories int `json:"productCategories"`
	Products          int `json:"products"`
	Combos            int `json:"combos"`
	ComboComponents   int `json:"comboComponents"`
}

type capabilities struct {
	RestaurantID           string     `json:"restaurantId"`
	CreateOnly             bool       `json:"createOnly"`
	PublishesAutomatically bool       `json:"publishesAutomatically"`
	CombosEnabled          bool       `json:"combosEnabled"`
	TargetModes            []string   `json:"targetModes"`
	SupportedEntities      []string   `json:"supportedEntities"`
	Limits                 limitsView `json:"limits"`
}

func capabilitiesView(rid string, c domain.Capabilities) capabilities {
	l := c.Limits
	return capabilities{
		RestaurantID: rid, CreateOnly: c.CreateOnly, PublishesAutomatically: c.PublishesAutomatically,
		CombosEnabled: c.CombosEnabled, TargetModes: c.TargetModes, SupportedEntities: c.SupportedEntities,
		Limits: limitsView{l.MenuCategories, l.MenuItems, l.OptionGroups, l.Options, l.ProductCategories, l.Products, l.Combos, l.ComboComponents},
	}
}

type targetCategory struct {
	CategoryID string `json:"categoryId"`
	Name       string `json:"name"`
	ItemCount  int    `json:"itemCount"`
}

type target struct {
	RestaurantID          string                `json:"restaurantId"`
	Menu                  contracts.MenuSummary `json:"menu"`
	CanAddCatalogEntities bool                  `json:"canAddCatalogEntities"`
	Categories            []targetCategory      `json:"categories"`
}

func targetView(rid string, t contracts.CatalogTarget) target {
	out := target{
		RestaurantID: rid, Menu: t.Menu,
		CanAddCatalogEntities: t.InactiveDraft && !t.Menu.IsPosMenu && !t.Menu.IsOnlineMenu,
		Categories:            make([]targetCategory, len(t.Categories)),
	}
	for i, c := range t.Categories {
		out.Categories[i] = targetCategory(c)
	}
	return out
}

type planTarget struct {
	Mode                  string  `json:"mode"`
	MenuID                *string `json:"menuId"`
	MenuName              string  `json:"menuName"`
	PreviousCategoryCount int     `json:"previousCategoryCount"`
	PreviousItemCount     int     `json:"previousItemCount"`
}

type plan struct {
	RestaurantID           string                  `json:"restaurantId"`
	Valid                  bool                    `json:"valid"`
	PlanHash               string                  `json:"planHash"`
	MenuName               string                  `json:"menuName"`
	Target                 planTarget              `json:"target"`
	Creates                contracts.CatalogCounts `json:"creates"`
	Warnings               []domain.Issue          `json:"warnings"`
	Errors                 []domain.Issue          `json:"errors"`
	PublishesAutomatically bool                    `json:"publishesAutomatically"`
}

func planView(p domain.Plan) plan {
	out := plan{
		RestaurantID: p.RestaurantID, Valid: p.Valid, PlanHash: p.Hash, MenuName: p.MenuName,
		Target: planTarget{Mode: p.Target.Mode, MenuName: p.Target.MenuName,
			PreviousCategoryCount: p.Target.PreviousCategoryCount, PreviousItemCount: p.Target.PreviousItemCount},
		Creates: p.Creates, Warnings: p.Warnings, Errors: p.Errors,
	}
	if p.Target.MenuID != "" {
		id := p.Target.MenuID
		out.Target.MenuID = &id
	}
	if out.Warnings == nil {
		out.Warnings = []domain.Issue{}
	}
	if out.Errors == nil {
		out.Errors = []domain.Issue{}
	}
	return out
}
