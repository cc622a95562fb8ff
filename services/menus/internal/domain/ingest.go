package domain

import "fmt"

// CheckSnapshot refuses an ingested catalog that would break the catalog's
// rules: ids that are not uuids, references to rows it does not hold, names
// and prices out of bounds, menus published that it does not hold.
func CheckSnapshot(s Snapshot) error {
	if !IsUUID(s.RestaurantID) {
		return invalid("restaurantId must be a uuid.")
	}
	categories, groups, items, menus := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	for i, c := range s.Categories {
		if !IsUUID(c.ID) || checkName("name", c.Name) != nil {
			return invalid(fmt.Sprintf("categories[%d] needs a uuid id and a name of 1 to 200 characters.", i))
		}
		categories[c.ID] = true
	}
	for i, g := range s.OptionGroups {
		if !IsUUID(g.ID) || checkName("name", g.Name) != nil || g.MinSelections < 0 || g.MaxSelections < 1 || g.MaxSelections < g.MinSelections {
			return invalid(fmt.Sprintf("optionGroups[%d] needs a uuid id, a name and selections with 0 <= min <= max, max >= 1.", i))
		}
		for j, o := range g.Options {
			if !IsUUID(o.ID) || checkName("name", o.Name) != nil || checkPrice("priceMinor", o.PriceMinor) != nil {
				return invalid(fmt.Sprintf("optionGroups[%d].options[%d] needs a uuid id, a name and a price of 0 to 1000000000.", i, j))
			}
		}
		groups[g.ID] = true
	}
	for i, it := range s.Items {
		at := fmt.Sprintf("items[%d]", i)
		if !IsUUID(it.ID) || !categories[it.CategoryID] {
			return invalid(at + " needs a uuid id and the id of a category of the line.")
		}
		if checkName("name", it.Name) != nil || checkPrice("basePriceMinor", it.BasePriceMinor) != nil || it.ProductType == "" {
			return invalid(at + " needs a name, a base price of 0 to 1000000000 and a product type.")
		}
		switch it.Availability {
		case Available, SoldOut, Hidden:
		default:
			return invalid(at + ".availability must be available, sold_out or hidden.")
		}
		for _, g := range it.OptionGroupIDs {
			if !groups[g] {
				return invalid(at + ".optionGroupIds names an option group the line does not hold.")
			}
		}
		items[it.ID] = true
	}
	for i, m := range s.Menus {
		if !IsUUID(m.ID) || checkName("name", m.Name) != nil {
			return invalid(fmt.Sprintf("menus[%d] needs a uuid id and a name of 1 to 200 characters.", i))
		}
		for j, e := range m.Entries {
			if !items[e.ItemID] || (e.PriceOverrideMinor != nil && checkPrice("priceOverrideMinor", *e.PriceOverrideMinor) != nil) {
				return invalid(fmt.Sprintf("menus[%d].entries[%d] needs an item of the line and a price override of 0 to 1000000000 or null.", i, j))
			}
		}
		menus[m.ID] = true
	}
	for name, id := range map[string]*string{"posMenuId": s.PosMenuID, "onlineMenuId": s.OnlineMenuID} {
		if id != nil && !menus[*id] {
			return invalid(name + " names a menu the line does not hold.")
		}
	}
	return nil
}
