-- +goose Up
-- Authorizations whose authorization.revoked event was appended: a delivery
-- to an endpoint bound to one of them is blocked, except that event's own,
-- without waiting for identity's answer to expire from the worker's cache.
CREATE TABLE revoked_grants (
    grant_id   text        PRIMARY KEY,
    revoked_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE revoked_grants;
