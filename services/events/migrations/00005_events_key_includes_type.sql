-- +goose Up

-- A feed page first reads up to 1,000 numbers and types of a restaurant
-- (then the bodies of those it returns). With the type in the key's index
-- that read is an index-only scan: a few index pages instead of one heap
-- page per event, since a day's heap interleaves every restaurant's events.
ALTER TABLE events DROP CONSTRAINT events_pkey;
ALTER TABLE events ADD PRIMARY KEY (restaurant_id, seq, stored_at) INCLUDE (type);

-- +goose Down
ALTER TABLE events DROP CONSTRAINT events_pkey;
ALTER TABLE events ADD PRIMARY KEY (restaurant_id, seq, stored_at);
