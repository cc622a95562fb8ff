package domain

import "slices"

// Reach is what one user may oversee on the connected-apps page: the
// restaurants they own or that belong to an organization they administer
// (admin or owner), and those organizations.
type Reach struct {
	Restaurants   map[string]bool
	Organizations map[string]bool
}

// Sees tells whether a grant reaches anything of the user's: a restaurant it
// covers now, or an organization it names.
func (r Reach) Sees(c GrantCoverage) bool {
	for _, x := range c.Restaurants {
		if r.Restaurants[x.ID] {
			return true
		}
	}
	for _, o := range c.Organizations {
		if r.Organizations[o.OrganizationID] {
			return true
		}
	}
	return false
}

// Outside names what a grant covers beyond the user's reach: covered
// restaurants they neither own nor administer and named organizations they
// do not administer. A user may revoke a grant only when this is empty, so
// nobody ends another owner's authorization.
func (r Reach) Outside(c GrantCoverage) []string {
	var out []string
	for _, x := range c.Restaurants {
		if !r.Restaurants[x.ID] && !slices.Contains(out, x.Name) {
			out = append(out, x.Name)
		}
	}
	for _, o := range c.Organizations {
		if !r.Organizations[o.OrganizationID] && !slices.Contains(out, o.Name) {
			out = append(out, o.Name)
		}
	}
	return out
}

// ConnectedApp is one grant as the connected-apps page shows it to a user
// who may see it.
type ConnectedApp struct {
	Coverage   GrantCoverage
	ClientName string
	// ApprovedBy is the user who approved the grant.
	ApprovedBy User
	// Outside is what the grant covers beyond the viewer's reach; when it
	// is not empty the viewer cannot revoke the grant.
	Outside []string
}
