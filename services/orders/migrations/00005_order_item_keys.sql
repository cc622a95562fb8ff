-- +goose Up
-- An item_name search resolves its substring to the restaurant's line names
-- (order_item_names), then walks this table newest first per name and
-- merges the walks: a rare item reads its page, not every order of the
-- window. One row per order and distinct lower-cased line name; item_key is
-- the per-restaurant hash of the name (store.ItemKey), as in
-- orders.item_keys, which says which rows to delete when an order is
-- replaced. The primary key is walked backwards (newest first).
CREATE TABLE order_item_keys (
    restaurant_id uuid        NOT NULL,
    item_key      bigint      NOT NULL,
    occurred_at   timestamptz NOT NULL,
    order_id      text        NOT NULL,
    PRIMARY KEY (restaurant_id, item_key, occurred_at, order_id)
);

INSERT INTO order_item_keys (restaurant_id, item_key, occurred_at, order_id)
SELECT o.restaurant_id, k.item_key, o.occurred_at, o.order_id
  FROM orders o, unnest(o.item_keys) AS k(item_key)
 ORDER BY 1, 2, 3, 4;

-- Nothing searches orders.item_keys any more.
DROP INDEX orders_item_keys;

-- +goose Down
CREATE INDEX orders_item_keys ON orders USING gin (item_keys);
DROP TABLE order_item_keys;
