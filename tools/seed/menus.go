package seed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"partnerapi.dev/services/contracts"
)

// BenchCatalogItems is the size of the large catalog the bench size gives
// its first bench restaurant (Bench Bistro 01), on a draft menu of its own.
const BenchCatalogItems = 2000

// Menu ids of a restaurant, by what the menu is for.
func (g Generator) mainMenuID(restaurantID string) string {
	return g.ID("menu/" + restaurantID + "/main")
}
func (g Generator) lunchMenuID(restaurantID string) string {
	return g.ID("menu/" + restaurantID + "/lunch")
}
func (g Generator) draftMenuID(restaurantID string) string {
	return g.ID("menu/" + restaurantID + "/draft")
}
func (g Generator) benchMenuID(restaurantID string) string {
	return g.ID("menu/" + restaurantID + "/bench")
}

// GenerateMenus builds every restaurant's catalog and menus: the catalog the
// orders are sold from (same item, category, option and menu ids), with
//   - the main menu, POS and online, some of its prices the menu's own;
//   - a lunch menu sharing the first mains with the main menu (items that
//     cannot be edited through a draft);
//   - an inactive draft holding seasonal items of its own (editable);
//   - some items sold out and some hidden.
//
// The bench size gives its first bench restaurant BenchCatalogItems items,
// the extra ones on an inactive draft "Bench catalog".
func (g Generator) GenerateMenus(d Directory, size Size) []contracts.MenuCatalog {
	benchOrg := g.ID("organization/bench")
	out := make([]contracts.MenuCatalog, 0, len(d.Restaurants))
	bigDone := false
	for _, r := range d.Restaurants {
		big := false
		if size == SizeBench && !bigDone && containsString(r.OrganizationIDs, benchOrg) {
			big, bigDone = true, true
		}
		out = append(out, g.menuCatalog(r, big))
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (g Generator) menuCatalog(r Restaurant, big bool) contracts.MenuCatalog {
	rid := r.RestaurantID
	c := contracts.MenuCatalog{RestaurantID: rid}
	catIDs := map[string]string{}
	addCategory := func(name string) string {
		if id, ok := catIDs[name]; ok {
			return id
		}
		id := g.ID("catalog-category/" + rid + "/" + name)
		catIDs[name] = id
		c.Categories = append(c.Categories, contracts.MenuCatalogCategory{ID: id, Name: name, Visible: true})
		return id
	}
	groupAt, optionSeen := map[string]int{}, map[string]bool{}
	addOption := func(o menuOption) string {
		gid := g.ID("option-group/" + rid + "/" + o.group)
		i, ok := groupAt[o.group]
		if !ok {
			i = len(c.OptionGroups)
			groupAt[o.group] = i
			c.OptionGroups = append(c.OptionGroups, contracts.MenuCatalogOptionGroup{ID: gid, Name: o.group, MinSelections: 0})
		}
		oid := g.ID("option/" + rid + "/" + o.group + "/" + o.name)
		if !optionSeen[oid] {
			optionSeen[oid] = true
			og := &c.OptionGroups[i]
			og.Options = append(og.Options, contracts.MenuCatalogOption{ID: oid, Name: o.name, PriceMinor: o.price, Visible: true})
			og.MaxSelections = len(og.Options)
		}
		return gid
	}
	item := func(it menuItem, i int) contracts.MenuCatalogItem {
		ci := contracts.MenuCatalogItem{ID: g.ID("catalog-item/" + rid + "/" + it.name), CategoryID: addCategory(it.category), Name: it.name,
			BasePriceMinor: it.price, Visible: true, ShowInKitchen: it.itemType == "food" || it.itemType == "drink" || it.itemType == "alcohol",
			ProductType: it.itemType, Availability: "available", OpenPrice: it.itemType == "gift_card", IsAlcohol: it.itemType == "alcohol",
			OptionGroupIDs: []string{}}
		if ci.IsAlcohol {
			pct := 4.7
			ci.AlcoholPercentage = &pct
		}
		switch {
		case i%7 == 2:
			ci.Availability = "sold_out"
		case i%11 == 5:
			ci.Availability, ci.Visible = "hidden", false
		}
		if i%3 == 0 {
			desc := "House favourite: " + strings.ToLower(it.name) + "."
			ci.Description = &desc
		}
		seen := map[string]bool{}
		for _, o := range it.options {
			gid := addOption(o)
			if !seen[gid] {
				seen[gid] = true
				ci.OptionGroupIDs = append(ci.OptionGroupIDs, gid)
			}
		}
		return ci
	}

	main := contracts.MenuCatalogMenu{ID: g.mainMenuID(rid), Name: "Main menu"}
	lunch := contracts.MenuCatalogMenu{ID: g.lunchMenuID(rid), Name: "Lunch"}
	for i, it := range menus[r.Country] {
		ci := item(it, i)
		c.Items = append(c.Items, ci)
		entry := contracts.MenuCatalogMenuEntry{ItemID: ci.ID}
		if i%4 == 1 {
			// The menu's own price: a tenth off the base price.
			p := it.price - it.price/10
			entry.PriceOverrideMinor = &p
		}
		main.Entries = append(main.Entries, entry)
		if it.category == menus[r.Country][0].category && len(lunch.Entries) < 3 {
			lunch.Entries = append(lunch.Entries, contracts.MenuCatalogMenuEntry{ItemID: ci.ID})
		}
	}
	draft := contracts.MenuCatalogMenu{ID: g.draftMenuID(rid), Name: "Seasonal draft"}
	first := menus[r.Country][0]
	for i, name := range []string{"Seasonal Special", "Chef's Tasting Plate"} {
		ci := item(menuItem{name: name, category: first.category, itemType: "food", price: first.price + int64(i+1)*200}, 100+i)
		c.Items = append(c.Items, ci)
		draft.Entries = append(draft.Entries, contracts.MenuCatalogMenuEntry{ItemID: ci.ID})
	}
	c.Menus = []contracts.MenuCatalogMenu{main, lunch, draft}
	if big {
		bench := contracts.MenuCatalogMenu{ID: g.benchMenuID(rid), Name: "Bench catalog"}
		for i := len(c.Items); i < BenchCatalogItems; i++ {
			name := fmt.Sprintf("Bench Item %04d", i)
			ci := item(menuItem{name: name, category: fmt.Sprintf("Bench Category %02d", i%20), itemType: "food", price: int64(500 + i%40*25)}, i)
			c.Items = append(c.Items, ci)
			bench.Entries = append(bench.Entries, contracts.MenuCatalogMenuEntry{ItemID: ci.ID})
		}
		c.Menus = append(c.Menus, bench)
	}
	pos, online := main.ID, main.ID
	c.PosMenuID, c.OnlineMenuID = &pos, &online
	return c
}

// MenusBatchBytes bounds one ingestion request of LoadMenus.
const MenusBatchBytes = 8 << 20

// LoadMenus posts the catalogs as NDJSON (one restaurant a line) to the
// menus service's ingestion endpoint; menusURL is its base URL, e.g.
// http://127.0.0.1:8085. Loading them again changes nothing.
func (c Client) LoadMenus(ctx context.Context, menusURL, ingestToken string, catalogs []contracts.MenuCatalog) error {
	url := strings.TrimRight(menusURL, "/") + contracts.MenusIngestPath
	var batch bytes.Buffer
	flush := func() error {
		if batch.Len() == 0 {
			return nil
		}
		err := c.Post(ctx, url, ingestToken, "application/x-ndjson", bytes.NewReader(batch.Bytes()))
		batch.Reset()
		return err
	}
	for _, cat := range catalogs {
		line, err := json.Marshal(cat)
		if err != nil {
			return err
		}
		if batch.Len() > 0 && batch.Len()+len(line) > MenusBatchBytes {
			if err := flush(); err != nil {
				return err
			}
		}
		batch.Write(line)
		batch.WriteByte('\n')
	}
	return flush()
}
