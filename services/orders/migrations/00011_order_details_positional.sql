-- +goose Up
-- The elements of order_details' arrays become arrays of their fields in
-- the ingestion record's order (as the store writes them) instead of
-- objects: the field names were more than half of every row's bytes, all
-- of them written, logged to the WAL, scanned by the primary key's build
-- and copied by ANALYZE. Each column is rewritten once, in place.

-- +goose StatementBegin
CREATE FUNCTION pg_temp.positional_lines(a text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
SELECT coalesce(jsonb_agg(jsonb_build_array(e->'lineId', e->'catalogItemId', e->'catalogItemKind',
		e->'catalogCategoryId', e->'menuId', e->'name', e->'category', e->'itemType', e->'quantity',
		e->'unitPriceMinor', e->'originalUnitPriceMinor', e->'grossAmountMinor', e->'discountAmountMinor',
		e->'vatAmountMinor', e->'taxEvidence', e->'taxCountryCode', e->'taxRatesAsOf',
		(SELECT coalesce(jsonb_agg(jsonb_build_array(v->'category', v->'rateBps', v->'vatAmountMinor') ORDER BY vn), '[]')
			FROM jsonb_array_elements(coalesce(nullif(e->'vatRates', 'null'), '[]')) WITH ORDINALITY AS vr(v, vn)),
		(SELECT coalesce(jsonb_agg(jsonb_build_array(p->'optionId', p->'optionGroupId', p->'name', p->'quantity',
				p->'unitPriceMinor', p->'grossAmountMinor', p->'vatAmountMinor') ORDER BY pn), '[]')
			FROM jsonb_array_elements(coalesce(nullif(e->'selectedOptions', 'null'), '[]')) WITH ORDINALITY AS po(p, pn)))
	ORDER BY n), '[]')::text
FROM jsonb_array_elements(a::jsonb) WITH ORDINALITY AS x(e, n)
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION pg_temp.positional_vat_rows(a text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
SELECT coalesce(jsonb_agg(jsonb_build_array(e->'category', e->'rateBps', e->'grossAmountMinor',
		e->'netAmountMinor', e->'vatAmountMinor') ORDER BY n), '[]')::text
FROM jsonb_array_elements(a::jsonb) WITH ORDINALITY AS x(e, n)
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION pg_temp.positional_refunded_items(a text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
SELECT coalesce(jsonb_agg(jsonb_build_array(e->'lineId', e->'catalogItemId', e->'name', e->'quantity',
		e->'amountMinor', e->'refundedAt') ORDER BY n), '[]')::text
FROM jsonb_array_elements(a::jsonb) WITH ORDINALITY AS x(e, n)
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION pg_temp.positional_payment_references(a text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
SELECT coalesce(jsonb_agg(jsonb_build_array(e->'provider', e->'receiptHash', e->'checkoutId', e->'transactionId',
		e->'transactionCode', e->'sessionId', e->'recordedAmountMinor', e->'currency', e->'createdAt') ORDER BY n), '[]')::text
FROM jsonb_array_elements(a::jsonb) WITH ORDINALITY AS x(e, n)
$$;
-- +goose StatementEnd

ALTER TABLE order_details
	ALTER COLUMN lines TYPE text USING pg_temp.positional_lines(lines),
	ALTER COLUMN vat_rows TYPE text USING pg_temp.positional_vat_rows(vat_rows),
	ALTER COLUMN refunded_items TYPE text USING pg_temp.positional_refunded_items(refunded_items),
	ALTER COLUMN payment_references TYPE text USING pg_temp.positional_payment_references(payment_references);

DROP FUNCTION pg_temp.positional_lines, pg_temp.positional_vat_rows, pg_temp.positional_refunded_items,
	pg_temp.positional_payment_references;

COMMENT ON COLUMN order_details.lines IS 'the order''s lines: a JSON array of [lineId, catalogItemId, catalogItemKind, catalogCategoryId, menuId, name, category, itemType, quantity, unitPriceMinor, originalUnitPriceMinor, grossAmountMinor, discountAmountMinor, vatAmountMinor, taxEvidence, taxCountryCode, taxRatesAsOf, vatRates, selectedOptions], vatRates an array of [category, rateBps, vatAmountMinor], selectedOptions an array of [optionId, optionGroupId, name, quantity, unitPriceMinor, grossAmountMinor, vatAmountMinor]';
COMMENT ON COLUMN order_details.vat_rows IS 'the order''s VAT rows: a JSON array of [category, rateBps, grossAmountMinor, netAmountMinor, vatAmountMinor]';
COMMENT ON COLUMN order_details.refunded_items IS 'the order''s refunded items: a JSON array of [lineId, catalogItemId, name, quantity, amountMinor, refundedAt]';
COMMENT ON COLUMN order_details.payment_references IS 'the order''s payment references: a JSON array of [provider, receiptHash, checkoutId, transactionId, transactionCode, sessionId, recordedAmountMinor, currency, createdAt]';

-- +goose Down
-- +goose StatementBegin
CREATE FUNCTION pg_temp.object_lines(a text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
SELECT coalesce(jsonb_agg(jsonb_build_object('lineId', e->0, 'catalogItemId', e->1, 'catalogItemKind', e->2,
		'catalogCategoryId', e->3, 'menuId', e->4, 'name', e->5, 'category', e->6, 'itemType', e->7, 'quantity', e->8,
		'unitPriceMinor', e->9, 'originalUnitPriceMinor', e->10, 'grossAmountMinor', e->11, 'discountAmountMinor', e->12,
		'vatAmountMinor', e->13, 'taxEvidence', e->14, 'taxCountryCode', e->15, 'taxRatesAsOf', e->16,
		'vatRates', (SELECT coalesce(jsonb_agg(jsonb_build_object('category', v->0, 'rateBps', v->1, 'vatAmountMinor', v->2)
				ORDER BY vn), '[]')
			FROM jsonb_array_elements(e->17) WITH ORDINALITY AS vr(v, vn)),
		'selectedOptions', (SELECT coalesce(jsonb_agg(jsonb_build_object('optionId', p->0, 'optionGroupId', p->1, 'name', p->2,
				'quantity', p->3, 'unitPriceMinor', p->4, 'grossAmountMinor', p->5, 'vatAmountMinor', p->6) ORDER BY pn), '[]')
			FROM jsonb_array_elements(e->18) WITH ORDINALITY AS po(p, pn)))
	ORDER BY n), '[]')::text
FROM jsonb_array_elements(a::jsonb) WITH ORDINALITY AS x(e, n)
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION pg_temp.object_vat_rows(a text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
SELECT coalesce(jsonb_agg(jsonb_build_object('category', e->0, 'rateBps', e->1, 'grossAmountMinor', e->2,
		'netAmountMinor', e->3, 'vatAmountMinor', e->4) ORDER BY n), '[]')::text
FROM jsonb_array_elements(a::jsonb) WITH ORDINALITY AS x(e, n)
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION pg_temp.object_refunded_items(a text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
SELECT coalesce(jsonb_agg(jsonb_build_object('lineId', e->0, 'catalogItemId', e->1, 'name', e->2, 'quantity', e->3,
		'amountMinor', e->4, 'refundedAt', e->5) ORDER BY n), '[]')::text
FROM jsonb_array_elements(a::jsonb) WITH ORDINALITY AS x(e, n)
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION pg_temp.object_payment_references(a text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
SELECT coalesce(jsonb_agg(jsonb_build_object('provider', e->0, 'receiptHash', e->1, 'checkoutId', e->2,
		'transactionId', e->3, 'transactionCode', e->4, 'sessionId', e->5, 'recordedAmountMinor', e->6,
		'currency', e->7, 'createdAt', e->8) ORDER BY n), '[]')::text
FROM jsonb_array_elements(a::jsonb) WITH ORDINALITY AS x(e, n)
$$;
-- +goose StatementEnd

ALTER TABLE order_details
	ALTER COLUMN lines TYPE text USING pg_temp.object_lines(lines),
	ALTER COLUMN vat_rows TYPE text USING pg_temp.object_vat_rows(vat_rows),
	ALTER COLUMN refunded_items TYPE text USING pg_temp.object_refunded_items(refunded_items),
	ALTER COLUMN payment_references TYPE text USING pg_temp.object_payment_references(payment_references);

DROP FUNCTION pg_temp.object_lines, pg_temp.object_vat_rows, pg_temp.object_refunded_items,
	pg_temp.object_payment_references;

COMMENT ON COLUMN order_details.lines IS 'the order''s lines with their selectedOptions: a JSON array of the ingestion record''s lines';
COMMENT ON COLUMN order_details.vat_rows IS 'a JSON array of the ingestion record''s vatRows';
COMMENT ON COLUMN order_details.refunded_items IS 'a JSON array of the ingestion record''s refundedItems';
COMMENT ON COLUMN order_details.payment_references IS 'a JSON array of the ingestion record''s paymentReferences';
