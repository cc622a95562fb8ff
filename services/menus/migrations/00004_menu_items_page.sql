-- +goose Up
-- A menu belongs to one restaurant, so menu_id determines restaurant_id.
-- Without this the planner multiplies the two filters' selectivities,
-- expects a few dozen entries on a 2,000-item menu and sorts the whole menu
-- instead of walking the primary key (menu_id, item_id) for one page.
CREATE STATISTICS menu_items_menu_restaurant (dependencies) ON menu_id, restaurant_id FROM menu_items;
ANALYZE menu_items;

-- +goose Down
DROP STATISTICS menu_items_menu_restaurant;
