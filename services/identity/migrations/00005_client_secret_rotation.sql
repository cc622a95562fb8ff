-- +goose Up
-- A rotated client secret keeps working until previous_secret_expires_at, so a
-- partner can roll its deployments onto the new one.
ALTER TABLE partner_clients
    ADD COLUMN previous_secret_hash text,
    ADD COLUMN previous_secret_expires_at timestamptz;

-- +goose Down
ALTER TABLE partner_clients
    DROP COLUMN previous_secret_expires_at,
    DROP COLUMN previous_secret_hash;
