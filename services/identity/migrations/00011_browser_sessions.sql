-- +goose Up
-- A signed-in browser session of the sign-in, consent and connected-apps
-- pages. The cookie carries only a random id; the row is looked up on every
-- page, so signing out, "sign out everywhere", an operator or a password
-- change ends a session at once. id_hash is the SHA-256 of the id (hex): a copy of
-- this table signs nobody in.
CREATE TABLE browser_sessions (
    id_hash         text PRIMARY KEY,
    user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at      timestamptz NOT NULL DEFAULT now(),
    last_seen_at    timestamptz NOT NULL DEFAULT now(),
    -- idle_expires_at moves on with every page; expires_at never does.
    idle_expires_at timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL
);
CREATE INDEX browser_sessions_user_idx ON browser_sessions (user_id);
CREATE INDEX browser_sessions_expires_idx ON browser_sessions (expires_at);

-- A new password ends every session of the user, whatever wrote it.
-- +goose StatementBegin
CREATE FUNCTION end_sessions_on_password_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM browser_sessions WHERE user_id = NEW.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER users_password_changed AFTER UPDATE OF password_hash ON users
    FOR EACH ROW WHEN (OLD.password_hash IS DISTINCT FROM NEW.password_hash)
    EXECUTE FUNCTION end_sessions_on_password_change();

-- +goose Down
DROP TRIGGER users_password_changed ON users;
DROP FUNCTION end_sessions_on_password_change();
DROP TABLE browser_sessions;
