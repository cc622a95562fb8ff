-- +goose Up

-- An endpoint's waiting deliveries, oldest due first: a claim walks the
-- endpoints that have some (a skip scan, one descent per endpoint) and takes
-- each one's oldest due ones, so a long queue of one endpoint costs a claim
-- nothing; a replay counts them (at most MaxPendingForReplay may wait).
CREATE INDEX webhook_deliveries_endpoint_pending ON webhook_deliveries (endpoint_id, next_attempt_at, id) WHERE status = 'pending';

-- +goose Down
DROP INDEX webhook_deliveries_endpoint_pending;
