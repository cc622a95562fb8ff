-- +goose Up
-- A time-of-day filter walks orders_recent newest first; with the business
-- date and local minute in the index, the walk checks them on the index
-- alone (index-only scan) and only the page's orders are read from the
-- table, instead of every order the walk passes over.
DROP INDEX orders_recent;
CREATE INDEX orders_recent ON orders (restaurant_id, occurred_at DESC, order_id DESC) INCLUDE (business_date, local_minute);

-- +goose Down
DROP INDEX orders_recent;
CREATE INDEX orders_recent ON orders (restaurant_id, occurred_at DESC, order_id DESC);
