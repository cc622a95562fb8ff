package migrations

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/pressly/goose/v3"
)

// detailsMigration moves each order's lines (with their options), VAT rows,
// refunded items and payment references into one row of order_details, as
// JSON arrays in the ingestion record's JSON, and drops the five tables
// that held them a row each: nothing searches them and every read wants
// them whole with the order, so an order becomes two rows to load and to
// read. order_details is partitioned as the orders are.
//
// The arrays are JSON text (cast to json to look inside): nothing reads
// them in SQL, the store is their only writer, and a json column would
// check every value again on the way in, about a quarter of a bulk load's
// COPY time in PostgreSQL. A row of up to 8 kB stays in the table as written
// (toast_tuple_target), not compressed: compressing the larger rows on the
// way in cost more than it saved. Nothing filters on them, so they carry
// no planner statistics. They are written as the orders store writes them
// (times in UTC to the microsecond, fraction zeros dropped).
//
// Down rebuilds the five tables from the arrays, partitioned likewise.
func detailsMigration(version int64) *goose.Migration {
	return goose.NewGoMigration(version,
		&goose.GoFunc{RunTx: detailsUp},
		&goose.GoFunc{RunTx: detailsDown},
	)
}

// jsonTime is an instant as encoding/json writes a UTC time.Time truncated
// to the microsecond.
const jsonTime = `to_jsonb(to_char(%[1]s AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') ||
	rtrim(rtrim(to_char(%[1]s AT TIME ZONE 'UTC', '.US'), '0'), '.') || 'Z')`

//nolint:gosec // G202: jsonTime is a constant that names this constant SQL's own columns; no input reaches it
var detailsUpSQL = `
CREATE TABLE order_details (
    restaurant_id      uuid NOT NULL,
    order_id           text NOT NULL,
    lines              text NOT NULL,
    vat_rows           text NOT NULL,
    refunded_items     text NOT NULL,
    payment_references text NOT NULL,
    PRIMARY KEY (restaurant_id, order_id)
);

INSERT INTO order_details
SELECT o.restaurant_id, o.order_id,
	coalesce((SELECT jsonb_agg(jsonb_build_object(
			'lineId', l.line_id, 'catalogItemId', l.catalog_item_id, 'catalogItemKind', l.catalog_item_kind,
			'catalogCategoryId', l.catalog_category_id, 'menuId', l.menu_id, 'name', l.name, 'category', l.category,
			'itemType', l.item_type, 'quantity', l.quantity, 'unitPriceMinor', l.unit_price_minor,
			'originalUnitPriceMinor', l.original_unit_price_minor, 'grossAmountMinor', l.gross_amount_minor,
			'discountAmountMinor', l.discount_amount_minor, 'vatAmountMinor', l.vat_amount_minor,
			'taxEvidence', l.tax_evidence, 'taxCountryCode', l.tax_country_code,
			'taxRatesAsOf', to_char(l.tax_rates_as_of, 'YYYY-MM-DD'), 'vatRates', l.vat_rates,
			'selectedOptions', coalesce((SELECT jsonb_agg(jsonb_build_object(
					'optionId', p.option_id, 'optionGroupId', p.option_group_id, 'name', p.name, 'quantity', p.quantity,
					'unitPriceMinor', p.unit_price_minor, 'grossAmountMinor', p.gross_amount_minor,
					'vatAmountMinor', p.vat_amount_minor) ORDER BY p.position)
				FROM order_line_options p
				WHERE p.restaurant_id = l.restaurant_id AND p.order_id = l.order_id AND p.line_position = l.position), '[]'))
			ORDER BY l.position)
		FROM order_lines l WHERE l.restaurant_id = o.restaurant_id AND l.order_id = o.order_id), '[]')::text,
	coalesce((SELECT jsonb_agg(jsonb_build_object(
			'category', v.category, 'rateBps', v.rate_bps, 'grossAmountMinor', v.gross_amount_minor,
			'netAmountMinor', v.net_amount_minor, 'vatAmountMinor', v.vat_amount_minor) ORDER BY v.position)
		FROM order_vat_rows v WHERE v.restaurant_id = o.restaurant_id AND v.order_id = o.order_id), '[]')::text,
	coalesce((SELECT jsonb_agg(jsonb_build_object(
			'lineId', r.line_id, 'catalogItemId', r.catalog_item_id, 'name', r.name, 'quantity', r.quantity,
			'amountMinor', r.amount_minor, 'refundedAt', ` + fmt.Sprintf(jsonTime, "r.refunded_at") + `) ORDER BY r.position)
		FROM order_refunded_items r WHERE r.restaurant_id = o.restaurant_id AND r.order_id = o.order_id), '[]')::text,
	coalesce((SELECT jsonb_agg(jsonb_build_object(
			'provider', p.provider, 'receiptHash', p.receipt_hash, 'checkoutId', p.checkout_id,
			'transactionId', p.transaction_id, 'transactionCode', p.transaction_code, 'sessionId', p.session_id,
			'recordedAmountMinor', p.recorded_amount_minor, 'currency', p.currency,
			'createdAt', ` + fmt.Sprintf(jsonTime, "p.created_at") + `) ORDER BY p.position)
		FROM order_payment_references p WHERE p.restaurant_id = o.restaurant_id AND p.order_id = o.order_id), '[]')::text
FROM orders o;

DROP TABLE order_line_options, order_lines, order_vat_rows, order_refunded_items, order_payment_references;
`

func detailsUp(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, detailsUpSQL); err != nil {
		return err
	}
	if err := partitionLikeOrders(ctx, tx, "order_details"); err != nil {
		return err
	}
	// Storage parameters are set on each partition (a partitioned table
	// has no storage of its own).
	_, err := tx.ExecContext(ctx, `ALTER TABLE order_details
		ALTER COLUMN lines SET STATISTICS 0, ALTER COLUMN vat_rows SET STATISTICS 0,
		ALTER COLUMN refunded_items SET STATISTICS 0, ALTER COLUMN payment_references SET STATISTICS 0;
	COMMENT ON COLUMN order_details.lines IS 'the order''s lines with their selectedOptions: a JSON array of the ingestion record''s lines';
	COMMENT ON COLUMN order_details.vat_rows IS 'a JSON array of the ingestion record''s vatRows';
	COMMENT ON COLUMN order_details.refunded_items IS 'a JSON array of the ingestion record''s refundedItems';
	COMMENT ON COLUMN order_details.payment_references IS 'a JSON array of the ingestion record''s paymentReferences';
	DO $$
	DECLARE t regclass;
	BEGIN
		FOR t IN SELECT 'order_details'::regclass WHERE NOT EXISTS (SELECT FROM pg_partitioned_table WHERE partrelid = 'order_details'::regclass)
			UNION ALL SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'order_details'::regclass
		LOOP
			EXECUTE format('ALTER TABLE %s SET (toast_tuple_target = 8160)', t);
		END LOOP;
	END $$;
	ANALYZE order_details`)
	return err
}

// partitionLikeOrders turns each table into as many hash partitions by
// restaurant as the orders table has, when it has any.
func partitionLikeOrders(ctx context.Context, tx *sql.Tx, tables ...string) error {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT coalesce(max(substring(pg_get_expr(c.relpartbound, c.oid) from 'modulus (\d+)')::int), 0)
		FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'orders'::regclass`).Scan(&n)
	if err != nil || n == 0 {
		return err
	}
	for _, t := range tables {
		if err := rebuildTable(ctx, tx, t, n); err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
	}
	return nil
}

// detailTables are the tables detailsMigration folds into order_details,
// as migration 1 created them (partitioned, when the orders are, by the
// partition migration).
var detailTables = []string{"order_lines", "order_line_options", "order_vat_rows", "order_refunded_items", "order_payment_references"}

const detailsDownSQL = `
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
INSERT INTO order_lines
SELECT o.restaurant_id, o.order_id, e.n - 1, e.l->>'lineId', e.l->>'catalogItemId', e.l->>'catalogItemKind',
	e.l->>'catalogCategoryId', e.l->>'menuId', e.l->>'name', e.l->>'category', e.l->>'itemType',
	(e.l->>'quantity')::integer, (e.l->>'unitPriceMinor')::bigint, (e.l->>'originalUnitPriceMinor')::bigint,
	(e.l->>'grossAmountMinor')::bigint, (e.l->>'discountAmountMinor')::bigint, (e.l->>'vatAmountMinor')::bigint,
	e.l->>'taxEvidence', e.l->>'taxCountryCode', (e.l->>'taxRatesAsOf')::date, e.l->'vatRates'
FROM order_details o, jsonb_array_elements(o.lines::jsonb) WITH ORDINALITY e(l, n);

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
INSERT INTO order_line_options
SELECT o.restaurant_id, o.order_id, e.n - 1, p.m - 1, p.v->>'optionId', p.v->>'optionGroupId', p.v->>'name',
	(p.v->>'quantity')::integer, (p.v->>'unitPriceMinor')::bigint, (p.v->>'grossAmountMinor')::bigint,
	(p.v->>'vatAmountMinor')::bigint
FROM order_details o, jsonb_array_elements(o.lines::jsonb) WITH ORDINALITY e(l, n),
	jsonb_array_elements(e.l->'selectedOptions') WITH ORDINALITY p(v, m);

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
INSERT INTO order_vat_rows
SELECT o.restaurant_id, o.order_id, e.n - 1, e.v->>'category', (e.v->>'rateBps')::integer,
	(e.v->>'grossAmountMinor')::bigint, (e.v->>'netAmountMinor')::bigint, (e.v->>'vatAmountMinor')::bigint
FROM order_details o, jsonb_array_elements(o.vat_rows::jsonb) WITH ORDINALITY e(v, n);

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
INSERT INTO order_refunded_items
SELECT o.restaurant_id, o.order_id, e.n - 1, e.v->>'lineId', e.v->>'catalogItemId', e.v->>'name',
	(e.v->>'quantity')::integer, (e.v->>'amountMinor')::bigint, (e.v->>'refundedAt')::timestamptz
FROM order_details o, jsonb_array_elements(o.refunded_items::jsonb) WITH ORDINALITY e(v, n);

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
INSERT INTO order_payment_references
SELECT o.restaurant_id, o.order_id, e.n - 1, e.v->>'provider', e.v->>'receiptHash', e.v->>'checkoutId',
	e.v->>'transactionId', e.v->>'transactionCode', e.v->>'sessionId', (e.v->>'recordedAmountMinor')::bigint,
	e.v->>'currency', (e.v->>'createdAt')::timestamptz
FROM order_details o, jsonb_array_elements(o.payment_references::jsonb) WITH ORDINALITY e(v, n);

DROP TABLE order_details;
`

func detailsDown(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, detailsDownSQL); err != nil {
		return err
	}
	if err := partitionLikeOrders(ctx, tx, detailTables...); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, "ANALYZE "+strings.Join(detailTables, ", "))
	return err
}
