-- +goose Up
-- The connected-apps page finds the grants that cover a user's restaurants
-- and organizations.
CREATE INDEX grant_restaurants_restaurant_idx ON grant_restaurants (restaurant_id);
CREATE INDEX grant_organizations_organization_idx ON grant_organizations (organization_id);

-- +goose Down
DROP INDEX grant_organizations_organization_idx;
DROP INDEX grant_restaurants_restaurant_idx;
