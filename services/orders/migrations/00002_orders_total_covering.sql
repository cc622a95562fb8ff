-- +goose Up
-- An amount range matches orders all over a restaurant's history. With the
-- business date and order id in the index, the newest matches of a window are
-- picked from the index alone (index-only scan) and only the page's orders
-- are read from the table, however many orders the window holds.
DROP INDEX orders_total;
CREATE INDEX orders_total ON orders (restaurant_id, total_amount_minor, occurred_at) INCLUDE (business_date, order_id);

-- +goose Down
DROP INDEX orders_total;
CREATE INDEX orders_total ON orders (restaurant_id, total_amount_minor, occurred_at);
