package seed

import (
	"bufio"
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"partnerapi.dev/services/contracts"
)

// catalogIndex is what the menus service holds for one restaurant.
type catalogIndex struct {
	itemCategory map[string]string
	menuItems    map[string]map[string]bool
	options      map[string]string // option id -> group id
}

func indexCatalogs(catalogs []contracts.MenuCatalog) map[string]catalogIndex {
	out := map[string]catalogIndex{}
	for _, c := range catalogs {
		ix := catalogIndex{itemCategory: map[string]string{}, menuItems: map[string]map[string]bool{}, options: map[string]string{}}
		for _, it := range c.Items {
			ix.itemCategory[it.ID] = it.CategoryID
		}
		for _, m := range c.Menus {
			ix.menuItems[m.ID] = map[string]bool{}
			for _, e := range m.Entries {
				ix.menuItems[m.ID][e.ItemID] = true
			}
		}
		for _, g := range c.OptionGroups {
			for _, o := range g.Options {
				ix.options[o.ID] = g.ID
			}
		}
		out[c.RestaurantID] = ix
	}
	return out
}

// Every order line of the demo orders names an item, its category, a menu
// holding the item and options of the menus data set.
func TestOrderLinesResolveInTheMenus(t *testing.T) {
	g := Generator{Seed: 1}
	d := g.GenerateDirectory(SizeDemo)
	index := indexCatalogs(g.GenerateMenus(d, SizeDemo))
	sc := bufio.NewScanner(bytes.NewReader(generateDemoOrders(t, 1)))
	sc.Buffer(nil, 1<<20)
	lines := 0
	for sc.Scan() {
		var o contracts.OrderRecord
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatal(err)
		}
		ix, ok := index[o.RestaurantID]
		if !ok {
			t.Fatalf("restaurant %s has no catalog", o.RestaurantID)
		}
		for _, l := range o.Lines {
			if l.CatalogItemID == nil || l.CatalogCategoryID == nil || l.MenuID == nil {
				t.Fatalf("order %s line %s has no catalog references", o.OrderID, l.LineID)
			}
			cat, ok := ix.itemCategory[*l.CatalogItemID]
			if !ok || cat != *l.CatalogCategoryID || !ix.menuItems[*l.MenuID][*l.CatalogItemID] {
				t.Fatalf("order %s line %s (%s) does not resolve: item %v, category %s, on menu %v", o.OrderID, l.LineID, l.Name, ok, cat, ix.menuItems[*l.MenuID][*l.CatalogItemID])
			}
			for _, so := range l.SelectedOptions {
				if so.OptionID == nil || so.OptionGroupID == nil || ix.options[*so.OptionID] != *so.OptionGroupID {
					t.Fatalf("order %s line %s option %s does not resolve", o.OrderID, l.LineID, so.Name)
				}
			}
			lines++
		}
	}
	if lines == 0 {
		t.Fatal("no order lines")
	}
}

func TestMenusShape(t *testing.T) {
	g := Generator{Seed: 1}
	d := g.GenerateDirectory(SizeDemo)
	demo := g.GenerateMenus(d, SizeDemo)
	if !reflect.DeepEqual(demo, g.GenerateMenus(d, SizeDemo)) {
		t.Fatal("same seed gave different menus")
	}
	if len(demo) != len(d.Restaurants) {
		t.Fatalf("%d catalogs for %d restaurants", len(demo), len(d.Restaurants))
	}
	for _, c := range demo {
		main := g.mainMenuID(c.RestaurantID)
		if c.PosMenuID == nil || *c.PosMenuID != main || c.OnlineMenuID == nil || *c.OnlineMenuID != main {
			t.Fatalf("%s: main menu not published", c.RestaurantID)
		}
		ix := indexCatalogs([]contracts.MenuCatalog{c})[c.RestaurantID]
		onMenus := map[string]int{}
		for _, m := range c.Menus {
			for _, e := range m.Entries {
				onMenus[e.ItemID]++
			}
		}
		shared, draftOnly := 0, 0
		for id := range ix.menuItems[g.lunchMenuID(c.RestaurantID)] {
			if ix.menuItems[main][id] {
				shared++
			}
		}
		for id := range ix.menuItems[g.draftMenuID(c.RestaurantID)] {
			if onMenus[id] == 1 {
				draftOnly++
			}
		}
		availability, overrides := map[string]int{}, 0
		for _, it := range c.Items {
			availability[it.Availability]++
		}
		for _, m := range c.Menus {
			for _, e := range m.Entries {
				if e.PriceOverrideMinor != nil {
					overrides++
				}
			}
		}
		if shared == 0 || draftOnly == 0 || availability["sold_out"] == 0 || availability["hidden"] == 0 || overrides == 0 {
			t.Fatalf("%s: shared %d, draft-only %d, availability %v, overrides %d", c.RestaurantID, shared, draftOnly, availability, overrides)
		}
	}

	bench := g.GenerateMenus(g.GenerateDirectory(SizeBench), SizeBench)
	big := 0
	for _, c := range bench {
		if len(c.Items) == BenchCatalogItems {
			big++
		}
	}
	if big != 1 {
		t.Fatalf("%d restaurants with a %d-item catalog", big, BenchCatalogItems)
	}
}
