-- +goose Up
-- A refresh token stops working when it is rotated (used once) or revoked
-- (at /oauth2/revoke, or with its family after a reuse); the token endpoint
-- tells the client which.
ALTER TABLE oauth_tokens ADD COLUMN revoked boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE oauth_tokens DROP COLUMN revoked;
