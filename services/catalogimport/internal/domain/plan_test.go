package domain_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"partnerapi.dev/services/catalogimport/internal/domain"
	"partnerapi.dev/services/catalogimport/internal/fixture"
	"partnerapi.dev/services/contracts"
)

const restaurant = "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a01"

var settings = domain.Settings{Limits: domain.ContractLimits, CombosEnabled: true}

// cafe is the documented example document (testdata/cafe.json).
func cafe(t testing.TB) contracts.CatalogDocument {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/cafe.json")
	if err != nil {
		t.Fatal(err)
	}
	var d contracts.CatalogDocument
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func draft() *contracts.CatalogTarget {
	return &contracts.CatalogTarget{
		Menu:          contracts.MenuSummary{MenuID: "6a0c0e2e-0000-4000-8000-000000000001", Name: "Summer draft", CategoryCount: 1, ItemCount: 4},
		Revision:      "r7",
		InactiveDraft: true,
		Categories:    []contracts.CatalogTargetCategory{{CategoryID: "6a0c0e2e-0000-4000-8000-0000000000c1", Name: "Drinks", ItemCount: 4}},
	}
}

var newDraft = domain.Target{Mode: contracts.CatalogTargetNewDraft}

func existing() domain.Target {
	return domain.Target{Mode: contracts.CatalogTargetExistingDraft, MenuID: draft().Menu.MenuID}
}

func TestTheExampleDocumentPlansCleanly(t *testing.T) {
	p := domain.Evaluate(settings, restaurant, domain.PlanRequest{Target: newDraft, Document: cafe(t)}, nil)
	if !p.Valid || len(p.Errors) != 0 || len(p.Warnings) != 0 {
		t.Fatalf("errors %v warnings %v", p.Errors, p.Warnings)
	}
	want := contracts.CatalogCounts{Menus: 1, NewMenus: 1, MenuCategories: 3, MenuItems: 5, OptionGroups: 2, Options: 5,
		ProductCategories: 2, Products: 3, Combos: 2, ComboComponents: 4}
	if p.Creates != want {
		t.Fatalf("creates %+v, want %+v", p.Creates, want)
	}
	if p.MenuName != "Café Aalto spring menu" || p.Target.MenuID != "" || p.Target.Mode != "new_draft" {
		t.Fatalf("plan %+v", p)
	}
}

func s(v string) *string { return &v }

func f(v float64) *float64 { return &v }

// One fixture per rule: a change to the example document and the one error
// it must cause, at its JSON Pointer.
func TestPlanErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		target   domain.Target
		change   func(d *contracts.CatalogDocument)
		code     string
		path     string
		settings *domain.Settings
	}{
		{"menu ref empty", newDraft, func(d *contracts.CatalogDocument) { d.Menu.Ref = "" }, "ref_invalid", "/menu/ref", nil},
		{"menu name empty for a new draft", newDraft, func(d *contracts.CatalogDocument) { d.Menu.Name = "" }, "name_invalid", "/menu/name", nil},
		{"menu name blank", newDraft, func(d *contracts.CatalogDocument) { d.Menu.Name = "   " }, "name_invalid", "/menu/name", nil},
		{"ref of 65 characters", newDraft, func(d *contracts.CatalogDocument) { d.MenuItems[2].Ref = strings.Repeat("r", 65) }, "ref_invalid", "/menuItems/2/ref", nil},
		{"duplicate item ref", newDraft, func(d *contracts.CatalogDocument) { d.MenuItems[2].Ref = "cappuccino" }, "ref_duplicate", "/menuItems/2/ref", nil},
		{"duplicate category ref", newDraft, func(d *contracts.CatalogDocument) {
			d.MenuCategories = append(d.MenuCategories, contracts.CatalogMenuCategory{Ref: "coffee", Name: "More coffee"})
		}, "ref_duplicate", "/menuCategories/3/ref", nil},
		{"duplicate option ref across groups", newDraft, func(d *contracts.CatalogDocument) { d.OptionGroups[1].Options[1].Ref = "milk-oat" }, "ref_duplicate", "/optionGroups/1/options/1/ref", nil},
		{"duplicate product ref", newDraft, func(d *contracts.CatalogDocument) { d.Products[2].Ref = "oat-drink" }, "ref_duplicate", "/products/2/ref", nil},
		{"duplicate combo ref", newDraft, func(d *contracts.CatalogDocument) { d.Combos[1].Ref = "breakfast-deal" }, "ref_duplicate", "/combos/1/ref", nil},
		{"item category unresolved", newDraft, func(d *contracts.CatalogDocument) { d.MenuItems[3].CategoryRef = "cakes" }, "reference_unresolved", "/menuItems/3/categoryRef", nil},
		{"option group unresolved", newDraft, func(d *contracts.CatalogDocument) { d.MenuItems[0].OptionGroupAssignments[1].OptionGroupRef = "sauce" }, "reference_unresolved", "/menuItems/0/optionGroupAssignments/1/optionGroupRef", nil},
		{"option group assigned twice", newDraft, func(d *contracts.CatalogDocument) { d.MenuItems[0].OptionGroupAssignments[1].OptionGroupRef = "milk" }, "assignment_duplicate", "/menuItems/0/optionGroupAssignments/1/optionGroupRef", nil},
		{"assignment position taken", newDraft, func(d *contracts.CatalogDocument) { d.MenuItems[0].OptionGroupAssignments[1].Position = 0 }, "assignment_duplicate", "/menuItems/0/optionGroupAssignments/1/position", nil},
		{"assignment position negative", newDraft, func(d *contracts.CatalogDocument) { d.MenuItems[1].OptionGroupAssignments[0].Position = -1 }, "value_out_of_range", "/menuItems/1/optionGroupAssignments/0/position", nil},
		{"product category unresolved", newDraft, func(d *contracts.CatalogDocument) { d.Products[0].ProductCategoryRef = "tea" }, "reference_unresolved", "/products/0/productCategoryRef", nil},
		{"combo component unresolved", newDraft, func(d *contracts.CatalogDocument) { d.Combos[1].Components[1].MenuItemRef = "muffin" }, "reference_unresolved", "/combos/1/components/1/menuItemRef", nil},
		{"combo component quantity 0", newDraft, func(d *contracts.CatalogDocument) { d.Combos[0].Components[0].Quantity = 0 }, "value_out_of_range", "/combos/0/components/0/quantity", nil},
		{"combo without components", newDraft, func(d *contracts.CatalogDocument) { d.Combos[0].Components = nil }, "combo_empty", "/combos/0/components", nil},
		{"item name of 201 characters", newDraft, func(d *contracts.CatalogDocument) { d.MenuItems[4].Name = strings.Repeat("ä", 201) }, "name_invalid", "/menuItems/4/name", nil},
		{"category name empty", newDraft, func(d *contracts.CatalogDocument) { d.MenuCategories[1].Name = "" }, "name_invalid", "/menuCategories/1/name", nil},
		{"option name empty", newDraft, func(d *contracts.CatalogDocument) { d.OptionGroups[0].Options[2].Name = "" }, "name_invalid", "/optionGroups/0/options/2/name", nil},
		{"product category name empty", newDraft, func(d *contracts.CatalogDocument) { d.ProductCategories[1].Name = "" }, "name_invalid", "/productCategories/1/name", nil},
		{"product name empty", newDraft, func(d *contracts.CatalogDocument) { d.Products[1].Name = "" }, "name_invalid", "/products/1/name", nil},
		{"product unit of 33 characters", newDraft, func(d *contracts.CatalogDocument) { d.Products[0].Unit = strings.Repeat("u", 33) }, "value_invalid", "/products/0/unit", nil},
		{"product type empty", newDraft, func(d *contracts.CatalogDocument) { d.MenuItems[3].ProductType = "" }, "value_invalid", "/menuItems/3/productType", nil},
		{"product unit empty", newDraft, func(d *contracts.CatalogDocument) { d.Products[1].Unit = "" }, "value_invalid", "/products/1/unit", nil},
		{"combo name empty", newDraft, func(d *contracts.CatalogDocument) { d.Combos[1].Name = "" }, "name_invalid", "/combos/1/name", nil},
		{"description of 2,001 characters", newDraft, func(d *contracts.CatalogDocument) { d.MenuItems[2].Description = s(strings.Repeat("é", 2001)) }, "description_too_long", "/menuItems/2/description", nil},
		{"tag of 65 characters", newDraft, func(d *contracts.CatalogDocument) { d.MenuItems[0].Tag = s(strings.Repeat("t", 65)) }, "value_invalid", "/menuItems/0/tag", nil},
		{"negative price", newDraft, func(d *contracts.CatalogDocument) { d.MenuItems[1].BasePriceMinor = -1 }, "price_out_of_range", "/menuItems/1/basePriceMinor", nil},
		{"price over a billion", newDraft, func(d *contracts.CatalogDocument) { d.MenuItems[1].BasePriceMinor = 1_000_000_001 }, "price_out_of_range", "/menuItems/1/basePriceMinor", nil},
		{"option price over a billion", newDraft, func(d *contracts.CatalogDocument) { d.OptionGroups[1].Options[0].PriceMinor = 1_000_000_001 }, "price_out_of_range", "/optionGroups/1/options/0/priceMinor", nil},
		{"combo price negative", newDraft, func(d *contracts.CatalogDocument) { d.Combos[0].PriceMinor = -5 }, "price_out_of_range", "/combos/0/priceMinor", nil},
		{"alcohol percentage over 100", newDraft, func(d *contracts.CatalogDocument) { d.MenuItems[0].AlcoholPercentage = f(101) }, "value_out_of_range", "/menuItems/0/alcoholPercentage", nil},
		{"negative volume", newDraft, func(d *contracts.CatalogDocument) { d.MenuItems[0].Volume = f(-0.1) }, "value_out_of_range", "/menuItems/0/volume", nil},
		{"min above max selections", newDraft, func(d *contracts.CatalogDocument) { d.OptionGroups[1].MinSelections = 3 }, "selections_invalid", "/optionGroups/1/minSelections", nil},
		{"max selections 0", newDraft, func(d *contracts.CatalogDocument) { d.OptionGroups[0].MaxSelections = 0 }, "selections_invalid", "/optionGroups/0/maxSelections", nil},
		{"min selections above the options", newDraft, func(d *contracts.CatalogDocument) {
			d.OptionGroups[1].MinSelections, d.OptionGroups[1].MaxSelections = 3, 3
		}, "selections_invalid", "/optionGroups/1/minSelections", nil},
		{"option group without options", newDraft, func(d *contracts.CatalogDocument) { d.OptionGroups[1].Options = nil }, "option_group_empty", "/optionGroups/1/options", nil},
		{"combos while disabled", newDraft, func(d *contracts.CatalogDocument) {}, "combos_disabled", "/combos", &domain.Settings{Limits: domain.ContractLimits}},
		{"existing categories with a new draft", newDraft, func(d *contracts.CatalogDocument) {
			d.ExistingMenuCategories = []contracts.CatalogExistingCategory{{Ref: "drinks", CategoryID: draft().Categories[0].CategoryID}}
		}, "existing_category_without_draft", "/existingMenuCategories/0", nil},
		{"existing category not on the draft", existing(), func(d *contracts.CatalogDocument) {
			d.ExistingMenuCategories = []contracts.CatalogExistingCategory{{Ref: "drinks", CategoryID: "6a0c0e2e-0000-4000-8000-0000000000ff"}}
		}, "category_not_on_target", "/existingMenuCategories/0/categoryId", nil},
		{"existing category ref clashes with a new one", existing(), func(d *contracts.CatalogDocument) {
			d.ExistingMenuCategories = []contracts.CatalogExistingCategory{{Ref: "coffee", CategoryID: draft().Categories[0].CategoryID}}
		}, "ref_duplicate", "/menuCategories/0/ref", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := cafe(t)
			tc.change(&d)
			st := settings
			if tc.settings != nil {
				st = *tc.settings
			}
			var tgt *contracts.CatalogTarget
			if tc.target.Mode == contracts.CatalogTargetExistingDraft {
				tgt = draft()
			}
			p := domain.Evaluate(st, restaurant, domain.PlanRequest{Target: tc.target, Document: d}, tgt)
			if p.Valid {
				t.Fatal("valid, want an error")
			}
			if len(p.Errors) != 1 || p.Errors[0].Code != tc.code || p.Errors[0].Path != tc.path {
				t.Fatalf("errors %+v, want exactly %s at %s", p.Errors, tc.code, tc.path)
			}
			if p.Errors[0].Message == "" {
				t.Fatal("no message")
			}
		})
	}
}

func TestTargetNotADraft(t *testing.T) {
	for _, mut := range []func(*contracts.CatalogTarget){
		func(t *contracts.CatalogTarget) { t.Menu.IsPosMenu, t.InactiveDraft = true, false },
		func(t *contracts.CatalogTarget) { t.Menu.IsOnlineMenu, t.InactiveDraft = true, false },
	} {
		tgt := draft()
		mut(tgt)
		p := domain.Evaluate(settings, restaurant, domain.PlanRequest{Target: existing(), Document: cafe(t)}, tgt)
		if p.Valid || p.TargetIsDraft || len(p.Errors) != 1 || p.Errors[0].Code != "target_not_draft" || p.Errors[0].Path != "" {
			t.Fatalf("plan into a published menu: %+v", p.Errors)
		}
	}
}

func TestEveryErrorInOneAnswer(t *testing.T) {
	d := cafe(t)
	d.MenuItems[0].CategoryRef = "nope"
	d.MenuItems[1].BasePriceMinor = -1
	d.Products[0].ProductCategoryRef = "nope"
	d.Combos[0].Components[0].MenuItemRef = "nope"
	p := domain.Evaluate(settings, restaurant, domain.PlanRequest{Target: newDraft, Document: d}, nil)
	var paths []string
	for _, e := range p.Errors {
		paths = append(paths, e.Path)
	}
	want := "/menuItems/0/categoryRef /menuItems/1/basePriceMinor /products/0/productCategoryRef /combos/0/components/0/menuItemRef"
	if strings.Join(paths, " ") != want {
		t.Fatalf("paths %v, want %s", paths, want)
	}
}

func TestPlanWarnings(t *testing.T) {
	d := cafe(t)
	d.MenuCategories = append(d.MenuCategories, contracts.CatalogMenuCategory{Ref: "seasonal", Name: "Seasonal"})
	d.OptionGroups[1].Ref = "syrups"
	d.MenuItems[0].OptionGroupAssignments = d.MenuItems[0].OptionGroupAssignments[:1]
	d.ProductCategories = append(d.ProductCategories, contracts.CatalogProductCategory{Ref: "tea", Name: "Tea"})
	p := domain.Evaluate(settings, restaurant, domain.PlanRequest{Target: existing(), Document: d}, draft())
	if !p.Valid {
		t.Fatalf("warnings must not invalidate: %+v", p.Errors)
	}
	var got []string
	for _, w := range p.Warnings {
		got = append(got, w.Code+" "+w.Path)
	}
	want := "menu_name_ignored /menu/name|menu_category_empty /menuCategories/3|option_group_unassigned /optionGroups/1|product_category_empty /productCategories/2"
	if strings.Join(got, "|") != want {
		t.Fatalf("warnings %v\nwant %s", got, want)
	}
	if p.Target.MenuID != draft().Menu.MenuID || p.MenuName != "Summer draft" || p.Target.PreviousItemCount != 4 || p.Creates.NewMenus != 0 {
		t.Fatalf("existing draft plan %+v", p)
	}
}

func TestLimitsAtAndBeyondEachBound(t *testing.T) {
	l := domain.ContractLimits
	at := fixture.Full(l)
	if p := domain.Evaluate(settings, restaurant, domain.PlanRequest{Target: newDraft, Document: at}, nil); !p.Valid {
		t.Fatalf("a document at every limit: %+v", p.Errors)
	} else if want := (contracts.CatalogCounts{Menus: 1, NewMenus: 1, MenuCategories: 20, MenuItems: 100, OptionGroups: 20, Options: 100,
		ProductCategories: 20, Products: 100, Combos: 20, ComboComponents: 100}); p.Creates != want {
		t.Fatalf("creates %+v", p.Creates)
	}
	for _, tc := range []struct {
		name string
		grow func(*domain.Limits)
		path string
	}{
		{"menuCategories", func(l *domain.Limits) { l.MenuCategories++ }, "/menuCategories"},
		{"menuItems", func(l *domain.Limits) { l.MenuItems++ }, "/menuItems"},
		{"optionGroups", func(l *domain.Limits) { l.OptionGroups++ }, "/optionGroups"},
		{"options", func(l *domain.Limits) { l.Options++ }, "/optionGroups"},
		{"productCategories", func(l *domain.Limits) { l.ProductCategories++ }, "/productCategories"},
		{"products", func(l *domain.Limits) { l.Products++ }, "/products"},
		{"combos", func(l *domain.Limits) { l.Combos++ }, "/combos"},
		{"comboComponents", func(l *domain.Limits) { l.ComboComponents++ }, "/combos"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			over := domain.ContractLimits
			tc.grow(&over)
			p := domain.Evaluate(settings, restaurant, domain.PlanRequest{Target: newDraft, Document: fixture.Full(over)}, nil)
			if len(p.Errors) != 1 || p.Errors[0].Code != "limit_exceeded" || p.Errors[0].Path != tc.path {
				t.Fatalf("errors %+v, want limit_exceeded at %s", p.Errors, tc.path)
			}
			// A deployment's lower limit is the one enforced.
			lower := settings
			lower.Limits = domain.ContractLimits
			lower.Limits.MenuItems = 50
			if p := domain.Evaluate(lower, restaurant, domain.PlanRequest{Target: newDraft, Document: at}, nil); len(p.Errors) != 1 || p.Errors[0].Path != "/menuItems" {
				t.Fatalf("configured limit 50: %+v", p.Errors)
			}
		})
	}
}

func TestPlanHash(t *testing.T) {
	base := domain.Evaluate(settings, restaurant, domain.PlanRequest{Target: existing(), Document: cafe(t)}, draft())
	again := domain.Evaluate(settings, restaurant, domain.PlanRequest{Target: existing(), Document: cafe(t)}, draft())
	if base.Hash != again.Hash || len(base.Hash) != 64 {
		t.Fatalf("equal input, hashes %s and %s", base.Hash, again.Hash)
	}
	// Absent and empty lists are the same document.
	d := cafe(t)
	d.ExistingMenuCategories = nil
	d.MenuItems[2].OptionGroupAssignments = nil
	if h := domain.Evaluate(settings, restaurant, domain.PlanRequest{Target: existing(), Document: d}, draft()).Hash; h != base.Hash {
		t.Fatal("nil and empty lists hash differently")
	}
	changed := map[string]string{}
	changedDraft := draft()
	changedDraft.Revision = "r8"
	changed["draft revision"] = domain.Evaluate(settings, restaurant, domain.PlanRequest{Target: existing(), Document: cafe(t)}, changedDraft).Hash
	d = cafe(t)
	d.MenuItems[0].BasePriceMinor++
	changed["document"] = domain.Evaluate(settings, restaurant, domain.PlanRequest{Target: existing(), Document: d}, draft()).Hash
	changed["restaurant"] = domain.Evaluate(settings, "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a02", domain.PlanRequest{Target: existing(), Document: cafe(t)}, draft()).Hash
	changed["target"] = domain.Evaluate(settings, restaurant, domain.PlanRequest{Target: newDraft, Document: cafe(t)}, nil).Hash
	for what, h := range changed {
		if h == base.Hash {
			t.Errorf("a change of %s keeps the hash", what)
		}
	}
}

func TestCheckTarget(t *testing.T) {
	for _, tc := range []struct {
		target domain.Target
		ok     bool
	}{
		{newDraft, true},
		{existing(), true},
		{domain.Target{Mode: "new_draft", MenuID: existing().MenuID}, false},
		{domain.Target{Mode: "existing_draft"}, false},
		{domain.Target{Mode: "existing_draft", MenuID: "menu-1"}, false},
		{domain.Target{Mode: "overwrite"}, false},
		{domain.Target{}, false},
	} {
		if err := domain.CheckTarget(tc.target); (err == nil) != tc.ok {
			t.Errorf("%+v: %v", tc.target, err)
		}
	}
}
