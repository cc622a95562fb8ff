-- +goose Up
-- Access tokens are JWTs the gateway verifies on its own, so a revoked one
-- stays valid there until it expires unless the gateway is told. One row
-- per revoked token family (the fosite request id shared by a code, its
-- access tokens and its refresh chain) or per revoked access token (jti).
-- valid_until is when the last access token it names expires, plus the
-- gateway's clock leeway; after it the row is of no use and is purged.
CREATE TABLE token_revocations (
    grant_id    uuid NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('family', 'jti')),
    value       text NOT NULL,
    valid_until timestamptz NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (grant_id, kind, value)
);
CREATE INDEX token_revocations_valid_until_idx ON token_revocations (valid_until);

-- The authorization request a consent page showed: the decision posted
-- back names only this row, so nothing outside it (another scope, client,
-- redirect or challenge) can be approved. Single use, short-lived, and
-- bound to the browser session that saw the page.
CREATE TABLE consent_requests (
    id               text PRIMARY KEY,
    session_hash     text NOT NULL,
    user_id          uuid NOT NULL,
    client_id        text NOT NULL,
    params           jsonb NOT NULL,
    scopes           jsonb NOT NULL,
    restaurant_ids   jsonb NOT NULL,
    organization_ids jsonb NOT NULL,
    expires_at       timestamptz NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX consent_requests_expires_idx ON consent_requests (expires_at);

-- +goose Down
DROP TABLE consent_requests;
DROP TABLE token_revocations;
