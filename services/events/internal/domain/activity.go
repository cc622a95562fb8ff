package domain

import (
	"context"
	"net/url"
	"slices"

	"partnerapi.dev/services/contracts"
)

// ActivityRepository reads what partner clients did under their grants,
// for the owners' connected-apps page (never for partners).
type ActivityRepository interface {
	// GrantEvents lists each grant's events on the restaurants, newest
	// first, at most limit per grant, by grant.
	GrantEvents(ctx context.Context, grantIDs []string, restaurantIDs []string, limit int) (map[string][]contracts.ActivityEvent, error)
	// ClientEndpoints lists the clients' webhook endpoints on the
	// restaurants: each client, URL, restaurant and whether it is disabled.
	ClientEndpoints(ctx context.Context, clientIDs []string, restaurantIDs []string) ([]EndpointAddress, error)
}

// EndpointAddress is where one endpoint delivers.
type EndpointAddress struct {
	ClientID, URL, RestaurantID string
	Disabled                    bool
}

// ConnectedApps answers q with two reads however many apps it names: each
// grant's recent events and the hosts (only) of its client's endpoints.
func ConnectedApps(ctx context.Context, repo ActivityRepository, q contracts.ConnectedAppsQuery) (contracts.ConnectedAppsActivity, error) {
	out := contracts.ConnectedAppsActivity{Apps: make([]contracts.ConnectedAppActivity, len(q.Apps))}
	if len(q.Apps) == 0 || len(q.Apps) > contracts.MaxConnectedApps {
		return out, invalid("apps must list 1 to %d apps.", contracts.MaxConnectedApps)
	}
	var grants, clients []string
	for i, a := range q.Apps {
		if !IsUUID(a.GrantID) || a.ClientID == "" {
			return out, invalid("apps[%d]: grantId must be a uuid and clientId is required.", i)
		}
		out.Apps[i] = contracts.ConnectedAppActivity{GrantID: a.GrantID, Events: []contracts.ActivityEvent{}, WebhookHosts: []contracts.WebhookHost{}}
		if !slices.Contains(grants, a.GrantID) {
			grants = append(grants, a.GrantID)
		}
		if !slices.Contains(clients, a.ClientID) {
			clients = append(clients, a.ClientID)
		}
	}
	if q.Limit < 1 || q.Limit > 100 {
		return out, invalid("limit must be 1 to 100.")
	}
	if len(q.RestaurantIDs) > contracts.MaxConnectedAppRestaurants {
		return out, invalid("restaurantIds: at most %d.", contracts.MaxConnectedAppRestaurants)
	}
	for _, id := range q.RestaurantIDs {
		if !IsUUID(id) {
			return out, invalid("restaurantIds must be uuids.")
		}
	}
	if len(q.RestaurantIDs) == 0 {
		return out, nil
	}
	events, err := repo.GrantEvents(ctx, grants, q.RestaurantIDs, q.Limit)
	if err != nil {
		return out, err
	}
	eps, err := repo.ClientEndpoints(ctx, clients, q.RestaurantIDs)
	if err != nil {
		return out, err
	}
	hosts := map[string][]contracts.WebhookHost{}
	for _, e := range eps {
		if u, err := url.Parse(e.URL); err == nil && u.Host != "" {
			hosts[e.ClientID] = append(hosts[e.ClientID], contracts.WebhookHost{Host: u.Hostname(), RestaurantID: e.RestaurantID, Disabled: e.Disabled})
		}
	}
	for i, a := range q.Apps {
		if evs := events[a.GrantID]; evs != nil {
			out.Apps[i].Events = evs
		}
		if h := hosts[a.ClientID]; h != nil {
			out.Apps[i].WebhookHosts = h
		}
	}
	return out, nil
}
