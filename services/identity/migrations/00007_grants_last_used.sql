-- +goose Up
-- When a grant last authorized a partner request, to the minute, as the
-- gateway records it (sent in batches; the connected-apps page shows it).
ALTER TABLE grants ADD COLUMN last_used_at timestamptz;

-- +goose Down
ALTER TABLE grants DROP COLUMN last_used_at;
