-- +goose Up

-- The first number each restaurant stored on each day. A restaurant's
-- stored time never goes back, so the events after a number lie in the
-- day that holds the next number and later ones: a feed page reads this
-- short list first and bounds its queries by stored_at, so Postgres plans
-- and scans the one or two day partitions that hold the page instead of
-- every kept day. An append inserts the row when it is the restaurant's
-- first of the day; retention deletes the rows of the days it drops.
CREATE TABLE event_days (
    restaurant_id uuid   NOT NULL,
    day           date   NOT NULL,
    first_seq     bigint NOT NULL,
    PRIMARY KEY (restaurant_id, day)
);

INSERT INTO event_days (restaurant_id, day, first_seq)
SELECT restaurant_id, (stored_at AT TIME ZONE 'UTC')::date, min(seq)
FROM events GROUP BY 1, 2;

-- +goose Down
DROP TABLE event_days;
