-- +goose Up
-- One row per import written into a menu: who applied which plan, when, and
-- the ids the menus service gave each ref. Written in the same transaction as
-- the idempotency key of the apply request.
CREATE TABLE applied_imports (
    -- The batch id sent to the menus service, derived from (client,
    -- restaurant, idempotency key); also the answer's actionId.
    action_id       uuid        PRIMARY KEY,
    restaurant_id   uuid        NOT NULL,
    client_id       text        NOT NULL,
    user_id         text        NOT NULL,
    idempotency_key uuid        NOT NULL,
    plan_hash       text        NOT NULL CHECK (plan_hash ~ '^[0-9a-f]{64}$'),
    target_mode     text        NOT NULL CHECK (target_mode IN ('new_draft', 'existing_draft')),
    menu_id         uuid        NOT NULL,
    created         jsonb       NOT NULL,
    ids             jsonb       NOT NULL,
    applied_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX applied_imports_restaurant ON applied_imports (restaurant_id, applied_at);

-- A batch about to be sent to the menus service, committed before the call:
-- if this service stops after the menus service committed the batch but
-- before its own record, a retry with the same idempotency key resends this
-- exact batch (same batch id, same expected revision), which the menus
-- service answers with what it stored instead of writing again.
CREATE TABLE pending_batches (
    batch_id     uuid        PRIMARY KEY,
    request_hash text        NOT NULL,
    batch        jsonb       NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE pending_batches;
DROP TABLE applied_imports;
