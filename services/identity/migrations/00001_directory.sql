-- +goose Up
CREATE TABLE users (
    id            uuid PRIMARY KEY,
    email         text NOT NULL,
    name          text NOT NULL,
    password_hash text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE organizations (
    id              uuid PRIMARY KEY,
    name            text NOT NULL,
    registered_name text NOT NULL,
    business_id     text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE restaurants (
    id              uuid PRIMARY KEY,
    name            text NOT NULL,
    time_zone       text NOT NULL,
    day_start_hour  int  NOT NULL CHECK (day_start_hour BETWEEN 0 AND 23),
    currency        char(3) NOT NULL,
    country         char(2) NOT NULL,
    registered_name text NOT NULL,
    business_id     text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

-- A restaurant may belong to more than one organization.
CREATE TABLE organization_restaurants (
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    restaurant_id   uuid NOT NULL REFERENCES restaurants (id) ON DELETE CASCADE,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (organization_id, restaurant_id)
);
CREATE INDEX organization_restaurants_restaurant_idx ON organization_restaurants (restaurant_id);

CREATE TABLE memberships (
    id              bigserial PRIMARY KEY,
    user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    restaurant_id   uuid REFERENCES restaurants (id) ON DELETE CASCADE,
    organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
    role            text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    CHECK ((restaurant_id IS NULL) <> (organization_id IS NULL)),
    CHECK ((restaurant_id IS NOT NULL AND role = 'owner') OR (organization_id IS NOT NULL AND role IN ('admin', 'owner')))
);
CREATE UNIQUE INDEX memberships_user_restaurant_key ON memberships (user_id, restaurant_id) WHERE restaurant_id IS NOT NULL;
CREATE UNIQUE INDEX memberships_user_organization_key ON memberships (user_id, organization_id) WHERE organization_id IS NOT NULL;

CREATE TABLE partner_clients (
    id             text PRIMARY KEY,
    name           text NOT NULL,
    type           text NOT NULL CHECK (type IN ('public', 'confidential')),
    secret_hash    text,
    redirect_uris  jsonb NOT NULL DEFAULT '[]',
    allowed_scopes jsonb NOT NULL DEFAULT '[]',
    status         text NOT NULL CHECK (status IN ('pending', 'approved', 'suspended')),
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    CHECK ((type = 'confidential') = (secret_hash IS NOT NULL))
);

-- A grant is the owner's approval: one client, one user, approved scopes,
-- a boundary and the snapshot of what it covers, taken at approval.
CREATE TABLE grants (
    id         uuid PRIMARY KEY,
    client_id  text NOT NULL REFERENCES partner_clients (id),
    user_id    uuid NOT NULL REFERENCES users (id),
    scopes     jsonb NOT NULL,
    boundary   text NOT NULL CHECK (boundary IN ('restaurant', 'organization')),
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz
);
CREATE INDEX grants_client_idx ON grants (client_id, created_at DESC);
CREATE INDEX grants_user_idx ON grants (user_id, created_at DESC);

CREATE TABLE grant_organizations (
    grant_id        uuid NOT NULL REFERENCES grants (id) ON DELETE CASCADE,
    organization_id uuid NOT NULL REFERENCES organizations (id),
    role            text NOT NULL,
    PRIMARY KEY (grant_id, organization_id)
);

-- organization_id is NULL for a restaurant-boundary grant.
CREATE TABLE grant_restaurants (
    id              bigserial PRIMARY KEY,
    grant_id        uuid NOT NULL REFERENCES grants (id) ON DELETE CASCADE,
    restaurant_id   uuid NOT NULL REFERENCES restaurants (id),
    organization_id uuid REFERENCES organizations (id)
);
CREATE INDEX grant_restaurants_grant_idx ON grant_restaurants (grant_id, organization_id);

-- +goose Down
DROP TABLE grant_restaurants;
DROP TABLE grant_organizations;
DROP TABLE grants;
DROP TABLE partner_clients;
DROP TABLE memberships;
DROP TABLE organization_restaurants;
DROP TABLE restaurants;
DROP TABLE organizations;
DROP TABLE users;
