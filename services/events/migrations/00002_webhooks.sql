-- +goose Up

-- A partner's webhook endpoint for one restaurant, created under a grant:
-- every delivery checks that grant's current state. The secrets sign
-- deliveries, so they are kept as given (an HMAC needs the key itself).
CREATE TABLE webhook_endpoints (
    id                     uuid        PRIMARY KEY,
    restaurant_id          uuid        NOT NULL,
    client_id              text        NOT NULL,
    grant_id               text        NOT NULL,
    url                    text        NOT NULL,
    -- A JSON array of event type names.
    event_types            jsonb       NOT NULL,
    disabled               boolean     NOT NULL DEFAULT false,
    disabled_reason        text        NOT NULL DEFAULT '',
    secret                 text        NOT NULL,
    previous_secret        text        NOT NULL DEFAULT '',
    previous_until         timestamptz NOT NULL DEFAULT '-infinity',
    -- The first failed attempt since the last success; an endpoint failing
    -- for 5 days is disabled.
    failing_since          timestamptz,
    created_at             timestamptz NOT NULL,
    updated_at             timestamptz NOT NULL
);
CREATE INDEX webhook_endpoints_owner ON webhook_endpoints (restaurant_id, client_id);

-- The delivery queue and its history: one row per event and endpoint,
-- inserted in the transaction that numbers the event. Workers claim due rows
-- with FOR UPDATE SKIP LOCKED and lease them by moving next_attempt_at, so a
-- worker that dies mid-attempt leaves the row to be tried again.
CREATE TABLE webhook_deliveries (
    id              bigserial   PRIMARY KEY,
    endpoint_id     uuid        NOT NULL REFERENCES webhook_endpoints ON DELETE CASCADE,
    restaurant_id   uuid        NOT NULL,
    event_id        text        NOT NULL,
    event_type      text        NOT NULL,
    -- 0 for a test event, whose body is in test_data.
    seq             bigint      NOT NULL,
    test_data       jsonb,
    status          text        NOT NULL,
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    last_attempt_at timestamptz,
    last_status     integer     NOT NULL DEFAULT 0,
    last_error      text        NOT NULL DEFAULT '',
    latency_ms      integer     NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id DESC);

-- +goose Down
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
