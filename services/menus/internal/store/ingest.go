package store

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"partnerapi.dev/services/menus/internal/domain"
)

// Ingest stores each restaurant's catalog and menus as given, each in one
// transaction, then refreshes the planner's statistics (a bulk load of a
// large catalog otherwise leaves the item listing sorting rather than
// walking its index until autovacuum catches up). Rows are created or updated by id, only where something
// differs, so loading the same catalog again changes nothing (no item
// version or menu revision moves). Entries and categories a menu no longer
// has are removed from it; catalog rows the line does not mention stay.
func (s *Store) Ingest(ctx context.Context, catalogs []domain.Snapshot) error {
	for _, c := range catalogs {
		if err := s.ingest(ctx, c); err != nil {
			return fmt.Errorf("restaurant %s: %w", c.RestaurantID, err)
		}
	}
	return s.DB.WithContext(ctx).Exec(`ANALYZE categories, items, menus, menu_categories, menu_items, item_option_groups`).Error
}

func (s *Store) ingest(ctx context.Context, c domain.Snapshot) error {
	rid := c.RestaurantID
	return s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var cats []categoryRow
		for _, cat := range c.Categories {
			cats = append(cats, categoryRow{ID: cat.ID, RestaurantID: rid, Name: cat.Name, Visible: cat.Visible, RegulatedProductClass: "standard", DiscountPolicy: "allowed"})
		}
		if err := upsert(tx, "categories", []string{"id"}, []string{"name", "visible"}, cats); err != nil {
			return err
		}
		var groups []optionGroupRow
		var options []optionRow
		for _, g := range c.OptionGroups {
			groups = append(groups, optionGroupRow{ID: g.ID, RestaurantID: rid, Name: g.Name, MinSelections: g.MinSelections, MaxSelections: g.MaxSelections})
			for i, o := range g.Options {
				options = append(options, optionRow{ID: o.ID, RestaurantID: rid, OptionGroupID: g.ID, Name: o.Name, PriceMinor: o.PriceMinor, Visible: o.Visible, Position: i})
			}
		}
		if err := upsert(tx, "option_groups", []string{"id"}, []string{"name", "min_selections", "max_selections"}, groups); err != nil {
			return err
		}
		if err := upsert(tx, "options", []string{"id"}, []string{"option_group_id", "name", "price_minor", "visible", "position"}, options); err != nil {
			return err
		}

		categoryOf := map[string]string{}
		for _, it := range c.Items {
			categoryOf[it.ID] = it.CategoryID
		}
		var menus []menuRow
		var menuCats []menuCategoryRow
		var entries []menuItemRow
		for _, m := range c.Menus {
			menus = append(menus, menuRow{ID: m.ID, RestaurantID: rid, Name: m.Name})
			seen := map[string]bool{}
			for _, e := range m.Entries {
				cat := categoryOf[e.ItemID]
				if !seen[cat] {
					seen[cat] = true
					menuCats = append(menuCats, menuCategoryRow{RestaurantID: rid, MenuID: m.ID, CategoryID: cat, Position: len(seen) - 1})
				}
				entries = append(entries, menuItemRow{RestaurantID: rid, MenuID: m.ID, ItemID: e.ItemID, CategoryID: cat, PriceOverrideMinor: e.PriceOverrideMinor})
			}
		}
		if err := upsert(tx, "menus", []string{"id"}, []string{"name"}, menus); err != nil {
			return err
		}
		// Categories join their menus before items move into them.
		if err := upsert(tx, "menu_categories", []string{"menu_id", "category_id"}, []string{"position"}, menuCats); err != nil {
			return err
		}

		var items []itemRow
		var assignments []assignmentRow
		for _, it := range c.Items {
			items = append(items, toItemRow(rid, domain.Item{ID: it.ID, CategoryID: it.CategoryID, Name: it.Name, BasePriceMinor: it.BasePriceMinor,
				Description: it.Description, Visible: it.Visible, ShowInKitchen: it.ShowInKitchen, ProductType: it.ProductType,
				Dietary: it.DietaryInfo, Tag: it.Tag, OpenPrice: it.OpenPrice, IsAlcohol: it.IsAlcohol, AlcoholPercentage: it.AlcoholPercentage,
				Availability: it.Availability}))
			for i, g := range it.OptionGroupIDs {
				assignments = append(assignments, assignmentRow{RestaurantID: rid, ItemID: it.ID, OptionGroupID: g, Position: i})
			}
		}
		if err := upsert(tx, "items", []string{"id"}, []string{"category_id", "name", "description", "base_price_minor", "visible", "show_in_kitchen",
			"product_type", "vegan", "vegetarian", "gluten_free", "dairy_free", "lactose_free", "low_lactose", "egg_free", "nut_free", "soy_free",
			"tag", "open_price", "is_alcohol", "alcohol_percentage", "availability"}, items); err != nil {
			return err
		}
		if err := upsert(tx, "item_option_groups", []string{"item_id", "option_group_id"}, []string{"position"}, assignments); err != nil {
			return err
		}
		if err := upsert(tx, "menu_items", []string{"menu_id", "item_id"}, []string{"category_id", "price_override_minor"}, entries); err != nil {
			return err
		}
		// What the line no longer holds leaves its menus and items.
		for _, m := range c.Menus {
			keepItems, keepCats := []string{}, map[string]bool{}
			for _, e := range m.Entries {
				keepItems = append(keepItems, e.ItemID)
				keepCats[categoryOf[e.ItemID]] = true
			}
			q := tx.Where("menu_id = ?", m.ID)
			if len(keepItems) > 0 {
				q = q.Where("item_id NOT IN ?", keepItems)
			}
			if err := q.Delete(&menuItemRow{}).Error; err != nil {
				return err
			}
			cats := make([]string, 0, len(keepCats))
			for id := range keepCats {
				cats = append(cats, id)
			}
			q = tx.Where("menu_id = ?", m.ID)
			if len(cats) > 0 {
				q = q.Where("category_id NOT IN ?", cats)
			}
			if err := q.Delete(&menuCategoryRow{}).Error; err != nil {
				return err
			}
		}
		for _, it := range c.Items {
			q := tx.Where("item_id = ?", it.ID)
			if len(it.OptionGroupIDs) > 0 {
				q = q.Where("option_group_id NOT IN ?", it.OptionGroupIDs)
			}
			if err := q.Delete(&assignmentRow{}).Error; err != nil {
				return err
			}
		}
		if err := tx.Exec(`INSERT INTO menu_selection (restaurant_id) VALUES (?) ON CONFLICT DO NOTHING`, rid).Error; err != nil {
			return err
		}
		return tx.Exec(`UPDATE menu_selection SET pos_menu_id = ?, online_menu_id = ?
 WHERE restaurant_id = ? AND (pos_menu_id, online_menu_id) IS DISTINCT FROM (?::uuid, ?::uuid)`,
			c.PosMenuID, c.OnlineMenuID, rid, c.PosMenuID, c.OnlineMenuID).Error
	})
}

// upsert creates rows or updates cols of existing ones (by conflict), only
// where a value differs and the row is the same restaurant's.
func upsert[T any](tx *gorm.DB, table string, conflict, cols []string, rows []T) error {
	if len(rows) == 0 {
		return nil
	}
	target := make([]clause.Column, len(conflict))
	for i, c := range conflict {
		target[i] = clause.Column{Name: c}
	}
	mine, theirs := make([]string, len(cols)), make([]string, len(cols))
	for i, c := range cols {
		mine[i], theirs[i] = table+"."+c, "excluded."+c
	}
	changed := fmt.Sprintf("%s.restaurant_id = excluded.restaurant_id AND (%s) IS DISTINCT FROM (%s)",
		table, strings.Join(mine, ", "), strings.Join(theirs, ", "))
	return tx.Clauses(clause.OnConflict{Columns: target, DoUpdates: clause.AssignmentColumns(cols),
		Where: clause.Where{Exprs: []clause.Expression{clause.Expr{SQL: changed}}}}).CreateInBatches(&rows, 500).Error
}
