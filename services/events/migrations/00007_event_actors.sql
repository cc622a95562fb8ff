-- +goose Up
-- Who made each change: the partner client, the owner's grant and the user
-- of the request (NULL for changes no partner request made). Kept for the
-- owners' connected-apps page; the feed and webhooks never show them.
ALTER TABLE events ADD COLUMN client_id text, ADD COLUMN grant_id text, ADD COLUMN user_id text;
-- An app's recent writes: the newest events of one grant.
CREATE INDEX events_grant_recent ON events (grant_id, stored_at DESC, seq DESC) WHERE grant_id IS NOT NULL;

-- +goose Down
DROP INDEX events_grant_recent;
ALTER TABLE events DROP COLUMN client_id, DROP COLUMN grant_id, DROP COLUMN user_id;
