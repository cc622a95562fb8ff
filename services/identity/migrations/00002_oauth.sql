-- +goose Up
-- One row per authorization code, PKCE session, access token or refresh
-- token, keyed by fosite's signature (an HMAC of the token, never the token
-- itself). request_id is the token family: it stays the same across
-- refreshes, so a reused refresh token revokes the whole family.
CREATE TABLE oauth_tokens (
    kind             text NOT NULL CHECK (kind IN ('code', 'pkce', 'access', 'refresh')),
    signature        text NOT NULL,
    request_id       text NOT NULL,
    client_id        text NOT NULL,
    grant_id         uuid,
    access_signature text,
    active           boolean NOT NULL DEFAULT true,
    expires_at       timestamptz,
    data             jsonb NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (kind, signature)
);
CREATE INDEX oauth_tokens_family_idx ON oauth_tokens (request_id, kind);
CREATE INDEX oauth_tokens_grant_idx ON oauth_tokens (grant_id);

-- Token signing keys. Private keys are sealed with AES-GCM under
-- SIGNING_KEY_ENCRYPTION_KEY; a retiring key stays published until not_after.
CREATE TABLE signing_keys (
    kid         text PRIMARY KEY,
    alg         text NOT NULL,
    public_jwk  jsonb NOT NULL,
    private_enc bytea NOT NULL,
    status      text NOT NULL CHECK (status IN ('active', 'retiring')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    not_after   timestamptz
);
CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys (status) WHERE status = 'active';

CREATE TABLE sign_in_failures (
    id        bigserial PRIMARY KEY,
    email     text NOT NULL,
    failed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sign_in_failures_email_idx ON sign_in_failures (lower(email), failed_at);

-- +goose Down
DROP TABLE sign_in_failures;
DROP TABLE signing_keys;
DROP TABLE oauth_tokens;
