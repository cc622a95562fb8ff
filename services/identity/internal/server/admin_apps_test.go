package server_test

import (
	"net/http"
	"slices"
	"testing"
)

// TestAdminConnectedApps: the admin API lists what a user's connected-apps
// page shows, or every app covering a restaurant now.
func TestAdminConnectedApps(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := seedAccounts(t, e)
	list := func(query string) (int, []string) {
		var out struct {
			Data []struct {
				GrantID    string `json:"grantId"`
				ClientName string `json:"clientName"`
				ApprovedBy struct {
					Email string `json:"email"`
				} `json:"approvedBy"`
			} `json:"data"`
		}
		st := e.admin(t, http.MethodGet, "/admin/v1/connected-apps?"+query, nil, &out)
		var ids []string
		for _, a := range out.Data {
			if a.ClientName == "" || a.ApprovedBy.Email == "" {
				t.Errorf("%s: app without its name or approver: %+v", query, a)
			}
			ids = append(ids, a.GrantID)
		}
		slices.Sort(ids)
		return st, ids
	}
	sorted := func(ids ...string) []string { slices.Sort(ids); return ids }
	for query, want := range map[string][]string{
		"userId=" + userBea:     sorted(g.b, g.north),
		"userId=" + userEve:     {g.east},
		"userId=" + userOther:   nil,
		"restaurantId=" + restD: {g.east},
		"restaurantId=" + restB: sorted(g.b, g.north),
	} {
		if st, got := list(query); st != http.StatusOK || !slices.Equal(got, want) {
			t.Errorf("%s: %d %v, want %v", query, st, got, want)
		}
	}
	for _, bad := range []string{"", "userId=x", "restaurantId=x", "userId=" + userBea + "&restaurantId=" + restB} {
		if st, _ := list(bad); st != http.StatusBadRequest {
			t.Errorf("%q: %d, want 400", bad, st)
		}
	}
	if st := e.call(t, http.MethodGet, "/admin/v1/connected-apps?userId="+userBea, nil, nil, map[string]string{"Authorization": "Bearer " + adminToken}); st != http.StatusNotFound {
		t.Errorf("admin path on the public listener: %d", st)
	}
}
