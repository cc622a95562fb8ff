package api_test

import "partnerapi.dev/services/contracts"

// The Helsinki fixture: a main menu (POS and online) with an override, a
// lunch menu sharing the salmon soup with it, and a draft with an item of
// its own; coffee is in the catalog but on no menu.
const (
	catSoups    = "c0000000-0000-4000-8000-0000000000c1"
	catDesserts = "c0000000-0000-4000-8000-0000000000c2"
	catDrinks   = "c0000000-0000-4000-8000-0000000000c3"
	itemSalmon  = "a0000000-0000-4000-8000-000000000001"
	itemPea     = "a0000000-0000-4000-8000-000000000002"
	itemCake    = "a0000000-0000-4000-8000-000000000003"
	itemBeer    = "a0000000-0000-4000-8000-000000000004"
	itemCoffee  = "a0000000-0000-4000-8000-000000000005"
	itemSpecial = "a0000000-0000-4000-8000-000000000006"
	menuMain    = "b0000000-0000-4000-8000-0000000000a1"
	menuLunch   = "b0000000-0000-4000-8000-0000000000a2"
	menuDraft   = "b0000000-0000-4000-8000-0000000000a3"
	groupBread  = "d0000000-0000-4000-8000-0000000000d1"

	otherCat  = "c0000000-0000-4000-8000-0000000000f1"
	otherItem = "a0000000-0000-4000-8000-0000000000f1"
	otherMenu = "b0000000-0000-4000-8000-0000000000f1"
)

func fixture() []contracts.MenuCatalog {
	override := int64(1790)
	item := func(id, cat, name string, price int64, availability string) contracts.MenuCatalogItem {
		return contracts.MenuCatalogItem{ID: id, CategoryID: cat, Name: name, BasePriceMinor: price, Visible: true, ShowInKitchen: true,
			ProductType: "food", Availability: availability}
	}
	salmon := item(itemSalmon, catSoups, "Salmon Soup", 1680, "available")
	salmon.OptionGroupIDs = []string{groupBread}
	salmon.Description = str("Creamy, with dill")
	beer := item(itemBeer, catDrinks, "Lager 0.5", 790, "hidden")
	beer.ProductType, beer.IsAlcohol, beer.AlcoholPercentage = "drink", true, new(4.7)
	coffee := item(itemCoffee, catDrinks, "Coffee", 350, "available")
	coffee.ProductType = "drink"
	pos, online := menuMain, menuMain
	return []contracts.MenuCatalog{{
		RestaurantID: helsinki,
		Categories: []contracts.MenuCatalogCategory{{ID: catSoups, Name: "Soups", Visible: true}, {ID: catDesserts, Name: "Desserts", Visible: true},
			{ID: catDrinks, Name: "Drinks", Visible: true}},
		OptionGroups: []contracts.MenuCatalogOptionGroup{{ID: groupBread, Name: "Bread", MinSelections: 0, MaxSelections: 1,
			Options: []contracts.MenuCatalogOption{{ID: "e0000000-0000-4000-8000-0000000000e1", Name: "Rye bread", Visible: true}}}},
		Items: []contracts.MenuCatalogItem{salmon, item(itemPea, catSoups, "Pea Soup", 1200, "sold_out"),
			item(itemCake, catDesserts, "Lingonberry Cake", 800, "available"), beer, coffee,
			item(itemSpecial, catDesserts, "Chef's Special", 1500, "available")},
		Menus: []contracts.MenuCatalogMenu{
			{ID: menuMain, Name: "Main", Entries: []contracts.MenuCatalogMenuEntry{{ItemID: itemSalmon, PriceOverrideMinor: &override},
				{ItemID: itemPea}, {ItemID: itemCake}, {ItemID: itemBeer}}},
			{ID: menuLunch, Name: "Lunch", Entries: []contracts.MenuCatalogMenuEntry{{ItemID: itemSalmon}}},
			{ID: menuDraft, Name: "Autumn draft", Entries: []contracts.MenuCatalogMenuEntry{{ItemID: itemSpecial}}},
		},
		PosMenuID: &pos, OnlineMenuID: &online,
	}, {
		RestaurantID: other,
		Categories:   []contracts.MenuCatalogCategory{{ID: otherCat, Name: "Other", Visible: true}},
		Items:        []contracts.MenuCatalogItem{item(otherItem, otherCat, "Other Soup", 900, "available")},
		Menus:        []contracts.MenuCatalogMenu{{ID: otherMenu, Name: "Other", Entries: []contracts.MenuCatalogMenuEntry{{ItemID: otherItem}}}},
	}}
}

// fixtureEnv is an env with the fixture ingested.
func fixtureEnv(e *env) *env {
	e.ingest(fixture()...)
	return e
}
