// Package store keeps the menus schema with gorm: the catalog, menus, their
// entries and the published selection. It implements domain.Repository; the
// database itself holds the invariants (one POS and one online menu per
// restaurant, entries only in categories of their menu, revisions and item
// versions moved by triggers).
package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/schema"

	"partnerapi.dev/pkg/idempotency"
	"partnerapi.dev/pkg/outbox"
	"partnerapi.dev/services/menus/internal/domain"
)

// Store is the menus service's repository.
type Store struct {
	DB *gorm.DB
}

var _ domain.Repository = (*Store)(nil)

// menuSelect reads menus with their counts and whether they are published.
const menuSelect = `SELECT m.id, m.restaurant_id, m.name, m.revision,
       COALESCE(s.pos_menu_id = m.id, false) AS is_pos,
       COALESCE(s.online_menu_id = m.id, false) AS is_online,
       (SELECT count(*) FROM menu_categories mc WHERE mc.menu_id = m.id) AS category_count,
       (SELECT count(*) FROM menu_items mi WHERE mi.menu_id = m.id) AS item_count
  FROM menus m LEFT JOIN menu_selection s ON s.restaurant_id = m.restaurant_id
 WHERE m.restaurant_id = ?`

func (v menuView) domain() domain.Menu {
	return domain.Menu{ID: v.ID, RestaurantID: v.RestaurantID, Name: v.Name, IsPos: v.IsPos, IsOnline: v.IsOnline,
		CategoryCount: v.CategoryCount, ItemCount: v.ItemCount, Revision: v.Revision}
}

// readMenu reads one menu; with lock it first takes the menu's row lock,
// which every write that changes the menu, its entries or its publication
// holds until it commits. The state is read by a statement of its own after
// the lock is granted: under READ COMMITTED a statement sees what had
// committed when it started, so a locking read that waited for a publish or
// an added item would still show the joined selection and the counted
// entries as they were before it (only the locked row itself is re-read).
func readMenu(db *gorm.DB, restaurantID, menuID string, lock bool) (domain.Menu, error) {
	if lock {
		if err := lockRow(db, `SELECT id FROM menus WHERE restaurant_id = ? AND id = ? FOR UPDATE`, restaurantID, menuID); err != nil {
			return domain.Menu{}, err
		}
	}
	var rows []menuView
	if err := db.Raw(menuSelect+` AND m.id = ?`, restaurantID, menuID).Scan(&rows).Error; err != nil {
		return domain.Menu{}, err
	}
	if len(rows) == 0 {
		return domain.Menu{}, domain.ErrNotFound
	}
	return rows[0].domain(), nil
}

// lockRow runs a locking query for one row: ErrNotFound when there is none.
func lockRow(db *gorm.DB, query string, args ...any) error {
	var ids []string
	if err := db.Raw(query, args...).Scan(&ids).Error; err != nil {
		return err
	}
	if len(ids) == 0 {
		return domain.ErrNotFound
	}
	return nil
}

// Menus lists the restaurant's menus by name, then id, with its selection.
func (s *Store) Menus(ctx context.Context, restaurantID string) ([]domain.Menu, domain.Selection, error) {
	db := s.DB.WithContext(ctx)
	var rows []menuView
	if err := db.Raw(menuSelect+` ORDER BY m.name, m.id`, restaurantID).Scan(&rows).Error; err != nil {
		return nil, domain.Selection{}, err
	}
	out := make([]domain.Menu, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	sel, err := selection(db, restaurantID, false)
	return out, sel, err
}

func selection(db *gorm.DB, restaurantID string, lock bool) (domain.Selection, error) {
	q := `SELECT pos_menu_id, online_menu_id FROM menu_selection WHERE restaurant_id = ?`
	if lock {
		q += ` FOR UPDATE`
	}
	var rows []struct {
		PosMenuID    *string
		OnlineMenuID *string
	}
	if err := db.Raw(q, restaurantID).Scan(&rows).Error; err != nil || len(rows) == 0 {
		return domain.Selection{}, err
	}
	return domain.Selection{PosMenuID: rows[0].PosMenuID, OnlineMenuID: rows[0].OnlineMenuID}, nil
}

// Menu returns one menu of the restaurant.
func (s *Store) Menu(ctx context.Context, restaurantID, menuID string) (domain.Menu, error) {
	return readMenu(s.DB.WithContext(ctx), restaurantID, menuID, false)
}

// Items returns one page of a menu's items by item id.
func (s *Store) Items(ctx context.Context, f domain.ItemFilter) (domain.ItemPage, error) {
	var rows []struct {
		ID                  string
		Name                string
		Description         *string
		CategoryID          string
		CategoryName        string
		EffectivePriceMinor int64
		BasePriceMinor      int64
		Overridden          bool
		Availability        string
		ProductType         string
		OpenPrice           bool
	}
	q := `SELECT i.id, i.name, i.description, mi.category_id, c.name AS category_name,
       COALESCE(mi.price_override_minor, i.base_price_minor) AS effective_price_minor, i.base_price_minor,
       mi.price_override_minor IS NOT NULL AS overridden, i.availability, i.product_type, i.open_price
  FROM menu_items mi JOIN items i ON i.id = mi.item_id JOIN categories c ON c.id = mi.category_id
 WHERE mi.menu_id = @menu AND mi.restaurant_id = @restaurant`
	args := map[string]any{"menu": f.MenuID, "restaurant": f.RestaurantID, "limit": f.Limit + 1}
	if f.After != "" {
		q += ` AND mi.item_id > @after`
		args["after"] = f.After
	}
	if f.Availability != "" {
		q += ` AND i.availability = @availability`
		args["availability"] = f.Availability
	}
	q += ` ORDER BY mi.item_id LIMIT @limit`
	if err := s.DB.WithContext(ctx).Raw(q, args).Scan(&rows).Error; err != nil {
		return domain.ItemPage{}, err
	}
	var page domain.ItemPage
	if len(rows) > f.Limit {
		rows = rows[:f.Limit]
		next := rows[len(rows)-1].ID
		page.Next = &next
	}
	page.Items = make([]domain.ListedItem, len(rows))
	for i, r := range rows {
		src := domain.PriceBase
		if r.Overridden {
			src = domain.PriceMenuOverride
		}
		page.Items[i] = domain.ListedItem{ID: r.ID, Name: r.Name, Description: r.Description, CategoryID: r.CategoryID,
			CategoryName: r.CategoryName, EffectivePriceMinor: r.EffectivePriceMinor, BasePriceMinor: r.BasePriceMinor,
			PriceSource: src, Availability: r.Availability, ProductType: r.ProductType, OpenPrice: r.OpenPrice}
	}
	return page, nil
}

const draftItemSelect = `SELECT i.id, mi.category_id, i.name, i.base_price_minor, i.description, i.visible, i.show_in_kitchen, i.version,
       (SELECT count(*) FROM menu_items o WHERE o.item_id = i.id AND o.menu_id <> mi.menu_id) AS shared
  FROM menu_items mi JOIN items i ON i.id = mi.item_id
 WHERE mi.restaurant_id = ? AND mi.menu_id = ? AND mi.item_id = ?`

// readDraftItem reads one item of a menu with the count of the other menus
// showing it; with lock it first takes the item's row lock (which an entry
// added to another menu waits for through its foreign key) and then reads,
// for the reason readMenu gives.
func readDraftItem(db *gorm.DB, restaurantID, menuID, itemID string, lock bool) (domain.DraftItem, int, error) {
	if lock {
		if err := lockRow(db, `SELECT i.id FROM menu_items mi JOIN items i ON i.id = mi.item_id
 WHERE mi.restaurant_id = ? AND mi.menu_id = ? AND mi.item_id = ? FOR UPDATE OF i`, restaurantID, menuID, itemID); err != nil {
			return domain.DraftItem{}, 0, err
		}
	}
	var rows []draftItemView
	if err := db.Raw(draftItemSelect, restaurantID, menuID, itemID).Scan(&rows).Error; err != nil {
		return domain.DraftItem{}, 0, err
	}
	if len(rows) == 0 {
		return domain.DraftItem{}, 0, domain.ErrNotFound
	}
	r := rows[0]
	return domain.DraftItem{ID: r.ID, CategoryID: r.CategoryID, Name: r.Name, BasePriceMinor: r.BasePriceMinor, Description: r.Description,
		Visible: r.Visible, ShowInKitchen: r.ShowInKitchen, Version: r.Version}, r.Shared, nil
}

// EditTarget returns one item of a menu with what decides whether it may be
// edited there.
func (s *Store) EditTarget(ctx context.Context, restaurantID, menuID, itemID string) (domain.EditTarget, error) {
	db := s.DB.WithContext(ctx)
	m, err := readMenu(db, restaurantID, menuID, false)
	if err != nil {
		return domain.EditTarget{}, err
	}
	it, shared, err := readDraftItem(db, restaurantID, menuID, itemID, false)
	if err != nil {
		return domain.EditTarget{}, err
	}
	return domain.EditTarget{Menu: m, Item: it, SharedMenuCount: shared}, nil
}

// CatalogTarget returns a menu with its categories and their item counts.
func (s *Store) CatalogTarget(ctx context.Context, restaurantID, menuID string) (domain.CatalogTarget, error) {
	db := s.DB.WithContext(ctx)
	m, err := readMenu(db, restaurantID, menuID, false)
	if err != nil {
		return domain.CatalogTarget{}, err
	}
	var cats []domain.TargetCategory
	err = db.Raw(`SELECT c.id, c.name, count(mi.item_id) AS item_count
  FROM menu_categories mc JOIN categories c ON c.id = mc.category_id
  LEFT JOIN menu_items mi ON mi.menu_id = mc.menu_id AND mi.category_id = mc.category_id
 WHERE mc.menu_id = ?
 GROUP BY c.id, c.name, mc.position ORDER BY mc.position, c.name, c.id`, menuID).Scan(&cats).Error
	return domain.CatalogTarget{Menu: m, Categories: cats}, err
}

// Write runs fn and records its answer under the key, in one transaction.
func (s *Store) Write(ctx context.Context, key domain.WriteKey, fn domain.WriteFunc) (domain.Answer, error) {
	res, err := idempotency.Run(ctx, s.DB, idempotency.Request{Scope: key.Scope, Key: key.Key, Body: key.Body},
		func(tx *gorm.DB) (int, any, error) {
			outcome, data, err := fn(&txStore{db: tx})
			return int(outcome), data, err
		})
	if errors.Is(err, idempotency.ErrKeyReused) {
		return domain.Answer{}, domain.ErrKeyReused
	}
	return domain.Answer{Outcome: domain.Outcome(res.Status), Data: res.Data, Replayed: res.Replayed}, err
}

// txStore is the repository inside one write's transaction.
type txStore struct {
	db *gorm.DB
}

func (t *txStore) Record(e domain.Event) error {
	return outbox.Record(t.db, outbox.Event{Type: e.Type, RestaurantID: e.RestaurantID, Data: e.Data})
}

func (t *txStore) CreateMenu(restaurantID, menuID, name string) error {
	return t.db.Create(&menuRow{ID: menuID, RestaurantID: restaurantID, Name: name}).Error
}

func (t *txStore) LockMenu(restaurantID, menuID string) (domain.Menu, error) {
	return readMenu(t.db, restaurantID, menuID, true)
}

func (t *txStore) LockSelection(restaurantID string) (domain.Selection, error) {
	if err := t.db.Exec(`INSERT INTO menu_selection (restaurant_id) VALUES (?) ON CONFLICT DO NOTHING`, restaurantID).Error; err != nil {
		return domain.Selection{}, err
	}
	return selection(t.db, restaurantID, true)
}

func (t *txStore) SetPosMenu(restaurantID, menuID string) error {
	return t.db.Exec(`UPDATE menu_selection SET pos_menu_id = ? WHERE restaurant_id = ?`, menuID, restaurantID).Error
}

func (t *txStore) SetOnlineMenu(restaurantID, menuID string) error {
	return t.db.Exec(`UPDATE menu_selection SET online_menu_id = ? WHERE restaurant_id = ?`, menuID, restaurantID).Error
}

func (t *txStore) CatalogItems(restaurantID string, ids []string) (map[string]string, error) {
	var rows []struct{ ID, CategoryID string }
	if err := t.db.Raw(`SELECT id, category_id FROM items WHERE restaurant_id = ? AND id IN ?`, restaurantID, ids).Scan(&rows).Error; err != nil {
		return nil, err
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.ID] = r.CategoryID
	}
	return out, nil
}

func (t *txStore) OnMenu(menuID string, ids []string) ([]string, error) {
	var out []string
	err := t.db.Raw(`SELECT item_id FROM menu_items WHERE menu_id = ? AND item_id IN ?`, menuID, ids).Scan(&out).Error
	return out, err
}

func (t *txStore) MenuCategories(menuID string) (map[string]bool, error) {
	var ids []string
	if err := t.db.Raw(`SELECT category_id FROM menu_categories WHERE menu_id = ?`, menuID).Scan(&ids).Error; err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

func (t *txStore) AddMenuCategories(restaurantID, menuID string, categoryIDs []string) error {
	if len(categoryIDs) == 0 {
		return nil
	}
	var next int
	if err := t.db.Raw(`SELECT COALESCE(max(position) + 1, 0) FROM menu_categories WHERE menu_id = ?`, menuID).Scan(&next).Error; err != nil {
		return err
	}
	rows := make([]menuCategoryRow, len(categoryIDs))
	for i, c := range categoryIDs {
		rows[i] = menuCategoryRow{RestaurantID: restaurantID, MenuID: menuID, CategoryID: c, Position: next + i}
	}
	return t.db.Create(&rows).Error
}

func (t *txStore) AddMenuItems(restaurantID, menuID string, entries []domain.MenuEntry) error {
	if len(entries) == 0 {
		return nil
	}
	rows := make([]menuItemRow, len(entries))
	for i, e := range entries {
		rows[i] = menuItemRow{RestaurantID: restaurantID, MenuID: menuID, ItemID: e.ItemID, CategoryID: e.CategoryID, PriceOverrideMinor: e.PriceOverrideMinor}
	}
	return t.db.CreateInBatches(&rows, 1000).Error
}

func (t *txStore) LockItem(restaurantID, menuID, itemID string) (domain.DraftItem, int, error) {
	return readDraftItem(t.db, restaurantID, menuID, itemID, true)
}

func (t *txStore) UpdateItem(restaurantID, itemID string, c domain.ItemChanges) (domain.DraftItem, error) {
	// An edit is a new version even when it sets the values the item has:
	// the editor reviewed and confirmed it (the trigger moves it only for a
	// real change, so the version is set here).
	var rows []draftItemView
	err := t.db.Raw(`UPDATE items SET
       name = COALESCE(?::text, name),
       base_price_minor = COALESCE(?::bigint, base_price_minor),
       description = CASE WHEN ?::boolean THEN ?::text ELSE description END,
       visible = COALESCE(?::boolean, visible),
       show_in_kitchen = COALESCE(?::boolean, show_in_kitchen),
       version = version + 1
 WHERE restaurant_id = ? AND id = ?
 RETURNING id, category_id, name, base_price_minor, description, visible, show_in_kitchen, version`,
		c.Name, c.BasePriceMinor, c.DescriptionSet, c.Description, c.Visible, c.ShowInKitchen, restaurantID, itemID).Scan(&rows).Error
	if err != nil {
		return domain.DraftItem{}, err
	}
	if len(rows) == 0 {
		return domain.DraftItem{}, domain.ErrNotFound
	}
	r := rows[0]
	return domain.DraftItem{ID: r.ID, CategoryID: r.CategoryID, Name: r.Name, BasePriceMinor: r.BasePriceMinor,
		Description: r.Description, Visible: r.Visible, ShowInKitchen: r.ShowInKitchen, Version: r.Version}, nil
}

// InsertCatalog creates a batch's rows, parents first.
func (t *txStore) InsertCatalog(r domain.CatalogRows) error {
	rid := r.RestaurantID
	var cats []categoryRow
	for _, c := range r.Categories {
		cats = append(cats, categoryRow{ID: c.ID, RestaurantID: rid, Name: c.Name, Visible: c.Visible, RegulatedProductClass: c.RegulatedProductClass, DiscountPolicy: c.DiscountPolicy})
	}
	var items []itemRow
	for _, it := range r.Items {
		items = append(items, toItemRow(rid, it))
	}
	var groups []optionGroupRow
	for _, g := range r.OptionGroups {
		groups = append(groups, optionGroupRow{ID: g.ID, RestaurantID: rid, Name: g.Name, MinSelections: g.MinSelections, MaxSelections: g.MaxSelections})
	}
	var options []optionRow
	for _, o := range r.Options {
		options = append(options, optionRow{ID: o.ID, RestaurantID: rid, OptionGroupID: o.OptionGroupID, Name: o.Name, PriceMinor: o.PriceMinor, Visible: o.Visible, Position: o.Position})
	}
	var assignments []assignmentRow
	for _, a := range r.Assignments {
		assignments = append(assignments, assignmentRow{RestaurantID: rid, ItemID: a.ItemID, OptionGroupID: a.OptionGroupID, Position: a.Position})
	}
	var pcs []productCategoryRow
	for _, pc := range r.ProductCategories {
		pcs = append(pcs, productCategoryRow{ID: pc.ID, RestaurantID: rid, Name: pc.Name})
	}
	var products []productRow
	for _, p := range r.Products {
		products = append(products, productRow{ID: p.ID, RestaurantID: rid, ProductCategoryID: p.ProductCategoryID, Name: p.Name, Unit: p.Unit, TrackStock: p.TrackStock})
	}
	var combos []comboRow
	for _, c := range r.Combos {
		combos = append(combos, comboRow{ID: c.ID, RestaurantID: rid, Name: c.Name, PriceMinor: c.PriceMinor, Visible: c.Visible})
	}
	var components []comboComponentRow
	for _, c := range r.ComboComponents {
		components = append(components, comboComponentRow{ComboID: c.ComboID, Position: c.Position, RestaurantID: rid, ItemID: c.ItemID, Quantity: c.Quantity})
	}
	if err := insertAll(t.db, cats, items, groups, options, assignments, pcs, products, combos, components); err != nil {
		return err
	}
	if err := t.AddMenuCategories(rid, r.MenuID, r.MenuCategoryIDs); err != nil {
		return err
	}
	return t.AddMenuItems(rid, r.MenuID, r.Entries)
}

// maxParams keeps a statement under PostgreSQL's 65,535 bind parameters.
const maxParams = 60_000

// insertAll writes slices of rows (parents before children), one
// multi-row INSERT per kind chained as data-modifying CTEs, so a catalog
// batch of about 500 rows is one round trip instead of one per kind.
// Foreign keys between the kinds hold: PostgreSQL checks them after the
// whole statement. A batch too large for one statement's parameters is
// split between statements, in order.
func insertAll(db *gorm.DB, slices ...any) error {
	var parts []string
	var vars []any
	flush := func() error {
		if len(parts) == 0 {
			return nil
		}
		sql := parts[len(parts)-1]
		if len(parts) > 1 {
			ctes := make([]string, len(parts)-1)
			for i, p := range parts[:len(parts)-1] {
				ctes[i] = fmt.Sprintf("k%d AS (%s)", i, p)
			}
			sql = "WITH " + strings.Join(ctes, ", ") + " " + sql
		}
		err := db.Exec(sql, vars...).Error
		parts, vars = nil, nil
		return err
	}
	for _, rows := range slices {
		rv := reflect.ValueOf(rows)
		if rv.Len() == 0 {
			continue
		}
		stmt := &gorm.Statement{DB: db}
		if err := stmt.Parse(rows); err != nil {
			return err
		}
		var cols []string
		var fields []*schema.Field
		for _, f := range stmt.Schema.Fields {
			if f.DBName != "" && f.Creatable {
				cols = append(cols, stmt.Quote(f.DBName))
				fields = append(fields, f)
			}
		}
		tuple := "(" + strings.TrimSuffix(strings.Repeat("?,", len(fields)), ",") + ")"
		for start := 0; start < rv.Len(); {
			room := (maxParams - len(vars)) / len(fields)
			if room == 0 {
				if err := flush(); err != nil {
					return err
				}
				continue
			}
			end := min(rv.Len(), start+room)
			tuples := make([]string, 0, end-start)
			for i := start; i < end; i++ {
				row := rv.Index(i)
				for _, f := range fields {
					v, _ := f.ValueOf(db.Statement.Context, row)
					vars = append(vars, v)
				}
				tuples = append(tuples, tuple)
			}
			parts = append(parts, "INSERT INTO "+stmt.Quote(stmt.Schema.Table)+" ("+strings.Join(cols, ", ")+") VALUES "+strings.Join(tuples, ", "))
			start = end
		}
	}
	return flush()
}

func toItemRow(restaurantID string, it domain.Item) itemRow {
	d := it.Dietary
	return itemRow{ID: it.ID, RestaurantID: restaurantID, CategoryID: it.CategoryID, Name: it.Name, Description: it.Description,
		BasePriceMinor: it.BasePriceMinor, Visible: it.Visible, ShowInKitchen: it.ShowInKitchen, ProductType: it.ProductType,
		Vegan: d.Vegan, Vegetarian: d.Vegetarian, GlutenFree: d.GlutenFree, DairyFree: d.DairyFree, LactoseFree: d.LactoseFree,
		LowLactose: d.LowLactose, EggFree: d.EggFree, NutFree: d.NutFree, SoyFree: d.SoyFree, Tag: it.Tag,
		TrackVolume: it.TrackVolume, OpenPrice: it.OpenPrice, IsAlcohol: it.IsAlcohol, Volume: it.Volume, Unit: it.Unit,
		AlcoholType: it.AlcoholType, AlcoholPercentage: it.AlcoholPercentage,
		RegulatedProductClassOverride: it.RegulatedProductClassOverride, DiscountPolicyOverride: it.DiscountPolicyOverride,
		Availability: it.Availability}
}
