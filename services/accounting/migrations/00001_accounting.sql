-- +goose Up
-- One exact payment: an order paid alone, a tab payment settling several
-- orders, or one share of a split tab. The fingerprint changes whenever the
-- content does, which is how a correction notices a changed source.
CREATE TABLE payment_sources (
    restaurant_id       uuid        NOT NULL,
    source_kind         text        NOT NULL,
    source_record_id    text        NOT NULL,
    receipt_hash        text        NOT NULL,
    parent_receipt_hash text,
    component_id        text,
    tab_split_id        text,
    source_group_id     text,
    order_ids           text[]      NOT NULL DEFAULT '{}',
    occurred_at         timestamptz NOT NULL,
    business_date       date        NOT NULL,
    method_key          text        NOT NULL,
    gross_minor         bigint      NOT NULL,
    vat_minor           bigint      NOT NULL,
    transaction_count   integer     NOT NULL,
    vat_known           boolean     NOT NULL,
    gross_zero bigint NOT NULL, gross_special bigint NOT NULL, gross_reduced bigint NOT NULL, gross_standard bigint NOT NULL, gross_unknown bigint NOT NULL,
    vat_zero   bigint NOT NULL, vat_special   bigint NOT NULL, vat_reduced   bigint NOT NULL, vat_standard   bigint NOT NULL, vat_unknown   bigint NOT NULL,
    discount_minor      bigint      NOT NULL,
    tip_minor           bigint      NOT NULL,
    fingerprint         text        NOT NULL,
    updated_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (restaurant_id, source_kind, source_record_id)
);
CREATE INDEX payment_sources_day ON payment_sources (restaurant_id, business_date, source_kind, source_record_id);
CREATE INDEX payment_sources_group ON payment_sources (restaurant_id, source_group_id) WHERE source_group_id IS NOT NULL;

-- Per (restaurant, business date, method) sums of the sources, rebuilt for
-- the touched days in the ingesting transaction: a month report reads about
-- 31 x methods rows, never the sources.
CREATE TABLE daily_method_totals (
    restaurant_id     uuid   NOT NULL,
    business_date     date   NOT NULL,
    method_key        text   NOT NULL,
    gross_minor       bigint NOT NULL,
    vat_minor         bigint NOT NULL,
    transaction_count bigint NOT NULL,
    gross_zero bigint NOT NULL, gross_special bigint NOT NULL, gross_reduced bigint NOT NULL, gross_standard bigint NOT NULL, gross_unknown bigint NOT NULL,
    vat_zero   bigint NOT NULL, vat_special   bigint NOT NULL, vat_reduced   bigint NOT NULL, vat_standard   bigint NOT NULL, vat_unknown   bigint NOT NULL,
    discount_minor    bigint NOT NULL,
    tip_minor         bigint NOT NULL,
    PRIMARY KEY (restaurant_id, business_date, method_key)
);

-- Per (restaurant, business date): how many sources lack VAT evidence and a
-- fingerprint of every source of the day.
CREATE TABLE daily_source_state (
    restaurant_id     uuid    NOT NULL,
    business_date     date    NOT NULL,
    source_count      integer NOT NULL,
    unknown_vat_count integer NOT NULL,
    fingerprint       text    NOT NULL,
    PRIMARY KEY (restaurant_id, business_date)
);

CREATE TABLE refund_events (
    restaurant_id          uuid        NOT NULL,
    refund_id              text        NOT NULL,
    kind                   text        NOT NULL,
    occurred_at            timestamptz NOT NULL,
    refund_business_date   date        NOT NULL,
    order_id               text,
    original_business_date date,
    method_key             text        NOT NULL,
    amount_minor           bigint      NOT NULL,
    returned_lines         jsonb       NOT NULL,
    impact_gross_minor     bigint,
    impact_net_minor       bigint,
    impact_vat_minor       bigint,
    impact_vat_by_rate     jsonb,
    legacy_timing          boolean     NOT NULL,
    fingerprint            text        NOT NULL,
    PRIMARY KEY (restaurant_id, refund_id)
);
CREATE INDEX refund_events_date ON refund_events (restaurant_id, refund_business_date, occurred_at, refund_id);
CREATE INDEX refund_events_order ON refund_events (restaurant_id, order_id, refund_business_date, occurred_at, refund_id);

-- The correction ledger: a correction and its undo are separate rows; the
-- trigger below refuses every UPDATE, DELETE and TRUNCATE.
CREATE TABLE correction_ledger (
    -- The order of writes (created_at may repeat within a clock tick).
    position             bigint      GENERATED ALWAYS AS IDENTITY,
    correction_id        uuid        PRIMARY KEY,
    batch_id             uuid        NOT NULL,
    revision_id          uuid        NOT NULL,
    restaurant_id        uuid        NOT NULL,
    business_date        date        NOT NULL,
    action               text        NOT NULL CHECK (action IN ('correct', 'undo')),
    source_kind          text        NOT NULL,
    source_record_id     text        NOT NULL,
    from_method_key      text        NOT NULL,
    to_method_key        text        NOT NULL,
    gross_minor          bigint      NOT NULL,
    vat_minor            bigint      NOT NULL,
    transaction_count    integer     NOT NULL,
    gross_by_rate        jsonb       NOT NULL,
    vat_by_rate          jsonb       NOT NULL,
    source_fingerprint   text        NOT NULL,
    reason               text        NOT NULL,
    undoes_correction_id uuid        REFERENCES correction_ledger (correction_id),
    created_at           timestamptz NOT NULL
);
CREATE INDEX correction_ledger_day ON correction_ledger (restaurant_id, business_date, position);
-- A correction is undone at most once.
CREATE UNIQUE INDEX correction_ledger_one_undo ON correction_ledger (undoes_correction_id) WHERE undoes_correction_id IS NOT NULL;

-- +goose StatementBegin
CREATE FUNCTION correction_ledger_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'correction_ledger is append-only: % refused', TG_OP;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER correction_ledger_append_only BEFORE UPDATE OR DELETE ON correction_ledger
    FOR EACH ROW EXECUTE FUNCTION correction_ledger_refuse_change();
CREATE TRIGGER correction_ledger_no_truncate BEFORE TRUNCATE ON correction_ledger
    FOR EACH STATEMENT EXECUTE FUNCTION correction_ledger_refuse_change();

-- The revision of a (restaurant, business date): changes with every ledger
-- write of that day. A day without a row has its initial revision (derived
-- from the restaurant and date).
CREATE TABLE day_revisions (
    restaurant_id uuid NOT NULL,
    business_date date NOT NULL,
    revision_id   uuid NOT NULL,
    PRIMARY KEY (restaurant_id, business_date)
);

-- +goose Down
DROP TABLE day_revisions;
DROP TABLE correction_ledger;
DROP FUNCTION correction_ledger_refuse_change();
DROP TABLE refund_events;
DROP TABLE daily_source_state;
DROP TABLE daily_method_totals;
DROP TABLE payment_sources;
