-- +goose Up
-- Every change that can narrow what a grant allows, written by triggers in
-- the changing transaction, so no code path can leave it out: a grant
-- revoked or changed, a token of it revoked, its coverage narrowed (a
-- restaurant leaving an organization included), its client suspended or
-- its scopes changed (client_id set, grant_id NULL: every grant of the
-- client). The gateway and the events service read it a few times a
-- second (GET /internal/v1/grant-changes) and drop what they cached of
-- those grants, so a revocation holds everywhere within a second while
-- their caches keep their lifetime. Rows older than an hour are purged.
CREATE TABLE grant_changes (
    seq        bigserial PRIMARY KEY,
    grant_id   uuid,
    client_id  text,
    changed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    CHECK ((grant_id IS NULL) <> (client_id IS NULL))
);
CREATE INDEX grant_changes_changed_at_idx ON grant_changes (changed_at);

-- +goose StatementBegin
CREATE FUNCTION grant_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO grant_changes (grant_id) SELECT DISTINCT grant_id FROM changed;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION grant_row_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO grant_changes (grant_id) VALUES (NEW.id);
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION client_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO grant_changes (client_id) VALUES (NEW.id);
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION organization_restaurants_left() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO grant_changes (grant_id)
    SELECT DISTINCT g.grant_id FROM left_rows l JOIN grant_organizations g ON g.organization_id = l.organization_id;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER grants_changed AFTER UPDATE OF scopes, expires_at, revoked_at ON grants FOR EACH ROW
    WHEN ((OLD.scopes, OLD.expires_at, OLD.revoked_at) IS DISTINCT FROM (NEW.scopes, NEW.expires_at, NEW.revoked_at))
    EXECUTE FUNCTION grant_row_changed();
CREATE TRIGGER token_revocations_added AFTER INSERT ON token_revocations
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION grant_changed();
CREATE TRIGGER grant_restaurants_removed AFTER DELETE ON grant_restaurants
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION grant_changed();
CREATE TRIGGER grant_organizations_removed AFTER DELETE ON grant_organizations
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION grant_changed();
CREATE TRIGGER partner_clients_changed AFTER UPDATE OF status, allowed_scopes ON partner_clients FOR EACH ROW
    WHEN ((OLD.status, OLD.allowed_scopes) IS DISTINCT FROM (NEW.status, NEW.allowed_scopes))
    EXECUTE FUNCTION client_changed();
CREATE TRIGGER organization_restaurants_removed AFTER DELETE ON organization_restaurants
    REFERENCING OLD TABLE AS left_rows FOR EACH STATEMENT EXECUTE FUNCTION organization_restaurants_left();

-- +goose Down
DROP TRIGGER organization_restaurants_removed ON organization_restaurants;
DROP TRIGGER partner_clients_changed ON partner_clients;
DROP TRIGGER grant_organizations_removed ON grant_organizations;
DROP TRIGGER grant_restaurants_removed ON grant_restaurants;
DROP TRIGGER token_revocations_added ON token_revocations;
DROP TRIGGER grants_changed ON grants;
DROP FUNCTION organization_restaurants_left();
DROP FUNCTION client_changed();
DROP FUNCTION grant_row_changed();
DROP FUNCTION grant_changed();
DROP TABLE grant_changes;
