-- +goose Up

-- One row per restaurant with events: the last number given and the oldest
-- kept. An append takes the row (INSERT … ON CONFLICT DO UPDATE) as the
-- last step before writing its events, so the row lock serialises a
-- restaurant's appends in commit order and a rollback gives its numbers back.
CREATE TABLE counters (
    restaurant_id uuid PRIMARY KEY,
    last_seq      bigint NOT NULL CHECK (last_seq >= 0),
    -- The stored time of the last append: appends never store an earlier
    -- one, so days of the log hold ranges of numbers in order.
    last_stored_at timestamptz NOT NULL,
    -- Events below oldest_seq were dropped by retention; oldest_seq is
    -- last_seq + 1 when none is kept.
    oldest_seq    bigint NOT NULL DEFAULT 1 CHECK (oldest_seq >= 1 AND oldest_seq <= last_seq + 1)
);

-- The event log, partitioned by the day it was stored so retention drops
-- whole days instead of deleting rows. Postgres requires the partition key
-- in every unique index of a partitioned table, hence stored_at in the key;
-- seq is unique per restaurant by the counter row.
CREATE TABLE events (
    restaurant_id uuid        NOT NULL,
    seq           bigint      NOT NULL,
    id            text        NOT NULL,
    type          text        NOT NULL,
    source        text        NOT NULL,
    occurred_at   timestamptz NOT NULL,
    stored_at     timestamptz NOT NULL,
    data          jsonb       NOT NULL,
    PRIMARY KEY (restaurant_id, seq, stored_at)
) PARTITION BY RANGE (stored_at);

-- Event ids already appended. An id must be unique across every day, and a
-- unique index on the partitioned events table would have to include
-- stored_at (so a resend on another day would pass): this small table of
-- ids is the one place that says "seen". Retention deletes ids stored before
-- the oldest kept day, with the partitions.
CREATE TABLE event_ids (
    id            text        PRIMARY KEY,
    restaurant_id uuid        NOT NULL,
    stored_at     timestamptz NOT NULL
);
CREATE INDEX event_ids_stored_at ON event_ids (stored_at);

-- +goose Down
DROP TABLE event_ids;
DROP TABLE events;
DROP TABLE counters;
