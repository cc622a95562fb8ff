-- +goose Up
-- pg_trgm lives in public so every schema can share one installation; its
-- operator class is named with the schema below.
CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;

-- One row per order in its latest state (ingestion replaces it as a whole).
CREATE TABLE orders (
    restaurant_id           uuid        NOT NULL,
    order_id                text        NOT NULL CHECK (char_length(order_id) BETWEEN 1 AND 255),
    restaurant_order_number bigint      NOT NULL CHECK (restaurant_order_number >= 1),
    receipt_hash            text        NOT NULL,
    occurred_at             timestamptz NOT NULL,
    business_date           date        NOT NULL,
    -- minutes since local midnight of occurred_at, for start_time/end_time
    local_minute            smallint    NOT NULL CHECK (local_minute BETWEEN 0 AND 1439),
    order_type              text        NOT NULL,
    table_number            integer,
    status                  text        NOT NULL CHECK (status IN ('paid', 'partially_refunded', 'refunded', 'voided')),
    -- as recorded at the till, and the effective settlement method searched on
    recorded_payment_method text        NOT NULL,
    payment_method          text        NOT NULL,
    origin_kind             text        NOT NULL,
    origin_provider         text,
    original_amount_minor   bigint      NOT NULL,
    total_amount_minor      bigint      NOT NULL,
    vat_minor               bigint      NOT NULL,
    refund_amount_minor     bigint      NOT NULL,
    discount_amount_minor   bigint      NOT NULL,
    gross_sales_minor       bigint      NOT NULL,
    net_sales_minor         bigint      NOT NULL,
    tip_amount_minor        bigint      NOT NULL,
    currency                text        NOT NULL,
    vat_allocation_method   text        NOT NULL,
    tax_country_code        text        NOT NULL,
    tax_rates_as_of         date        NOT NULL,
    line_count              integer     NOT NULL,
    refunded_item_count     integer     NOT NULL,
    payment_reference_count integer     NOT NULL,
    -- lower-cased line names joined by newlines: what item_name matches
    item_names              text        NOT NULL,
    -- per-restaurant hashes of the distinct lower-cased line names (see
    -- order_item_names): item_name resolves its substring to names there,
    -- then finds orders through this array's GIN index
    item_keys               bigint[]    NOT NULL,
    ingested_at             timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (restaurant_id, order_id)
);

-- Newest-first browsing and every date-bounded filter (keyset on occurred_at, order_id).
CREATE INDEX orders_recent ON orders (restaurant_id, occurred_at DESC, order_id DESC);
CREATE INDEX orders_receipt ON orders (restaurant_id, receipt_hash);
CREATE INDEX orders_number ON orders (restaurant_id, restaurant_order_number);
CREATE INDEX orders_total ON orders (restaurant_id, total_amount_minor, occurred_at);
CREATE INDEX orders_status ON orders (restaurant_id, status, occurred_at DESC, order_id DESC);
CREATE INDEX orders_method ON orders (restaurant_id, payment_method, occurred_at DESC, order_id DESC);
CREATE INDEX orders_local_time ON orders (restaurant_id, business_date, local_minute);
CREATE INDEX orders_item_keys ON orders USING gin (item_keys);

-- Every distinct (lower-cased) line name a restaurant has sold: item_name
-- substrings are matched here first (trigram index), a small set per
-- restaurant, so a name the restaurant never sold answers at once.
CREATE TABLE order_item_names (
    restaurant_id uuid NOT NULL,
    name          text NOT NULL,
    PRIMARY KEY (restaurant_id, name)
);
CREATE INDEX order_item_names_trgm ON order_item_names USING gin (name public.gin_trgm_ops);

CREATE TABLE order_lines (
    restaurant_id             uuid    NOT NULL,
    order_id                  text    NOT NULL,
    position                  integer NOT NULL,
    line_id                   text    NOT NULL,
    catalog_item_id           text,
    catalog_item_kind         text,
    catalog_category_id       text,
    menu_id                   text,
    name                      text    NOT NULL,
    category                  text,
    item_type                 text,
    quantity                  integer NOT NULL,
    unit_price_minor          bigint  NOT NULL,
    original_unit_price_minor bigint,
    gross_amount_minor        bigint  NOT NULL,
    discount_amount_minor     bigint  NOT NULL,
    vat_amount_minor          bigint  NOT NULL,
    tax_evidence              text    NOT NULL,
    tax_country_code          text,
    tax_rates_as_of           date,
    vat_rates                 jsonb   NOT NULL,
    PRIMARY KEY (restaurant_id, order_id, position)
);

CREATE TABLE order_line_options (
    restaurant_id      uuid    NOT NULL,
    order_id           text    NOT NULL,
    line_position      integer NOT NULL,
    position           integer NOT NULL,
    option_id          text,
    option_group_id    text,
    name               text    NOT NULL,
    quantity           integer NOT NULL,
    unit_price_minor   bigint  NOT NULL,
    gross_amount_minor bigint  NOT NULL,
    vat_amount_minor   bigint  NOT NULL,
    PRIMARY KEY (restaurant_id, order_id, line_position, position)
);

CREATE TABLE order_vat_rows (
    restaurant_id      uuid    NOT NULL,
    order_id           text    NOT NULL,
    position           integer NOT NULL,
    category           text    NOT NULL,
    rate_bps           integer NOT NULL,
    gross_amount_minor bigint  NOT NULL,
    net_amount_minor   bigint  NOT NULL,
    vat_amount_minor   bigint  NOT NULL,
    PRIMARY KEY (restaurant_id, order_id, position)
);

CREATE TABLE order_refunded_items (
    restaurant_id   uuid        NOT NULL,
    order_id        text        NOT NULL,
    position        integer     NOT NULL,
    line_id         text,
    catalog_item_id text,
    name            text        NOT NULL,
    quantity        integer     NOT NULL,
    amount_minor    bigint      NOT NULL,
    refunded_at     timestamptz NOT NULL,
    PRIMARY KEY (restaurant_id, order_id, position)
);

-- Payment tracking evidence; never card data or provider credentials.
CREATE TABLE order_payment_references (
    restaurant_id         uuid        NOT NULL,
    order_id              text        NOT NULL,
    position              integer     NOT NULL,
    provider              text        NOT NULL,
    receipt_hash          text,
    checkout_id           text,
    transaction_id        text,
    transaction_code      text,
    session_id            text,
    recorded_amount_minor bigint      NOT NULL,
    currency              text        NOT NULL,
    created_at            timestamptz NOT NULL,
    PRIMARY KEY (restaurant_id, order_id, position)
);

-- +goose Down
DROP TABLE order_item_names;
DROP TABLE order_payment_references;
DROP TABLE order_refunded_items;
DROP TABLE order_vat_rows;
DROP TABLE order_line_options;
DROP TABLE order_lines;
DROP TABLE orders;
