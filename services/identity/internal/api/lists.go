package api

import (
	"crypto/sha256"
	"errors"
	"net/url"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/cursor"
	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/services/identity/internal/domain"
)

// Page sizes of the operator's lists.
const (
	DefaultPageSize = 50
	MaxPageSize     = 200
)

func adminCursors(secret []byte) *cursor.Codec {
	k := sha256.Sum256(append([]byte("identity.admin-cursor."), secret...))
	return cursor.New(k[:])
}

type organizationView struct {
	OrganizationID string `json:"organizationId"`
	Name           string `json:"name"`
	RegisteredName string `json:"registeredName"`
	BusinessID     string `json:"businessId"`
}

type restaurantView struct {
	RestaurantID    string   `json:"restaurantId"`
	Name            string   `json:"name"`
	TimeZone        string   `json:"timeZone"`
	DayStartHour    int      `json:"dayStartHour"`
	Currency        string   `json:"currency"`
	Country         string   `json:"country"`
	RegisteredName  string   `json:"registeredName"`
	BusinessID      string   `json:"businessId"`
	OrganizationIDs []string `json:"organizationIds"`
}

// userView has no password hash: an operator never sees one.
type userView struct {
	UserID string `json:"userId"`
	Email  string `json:"email"`
	Name   string `json:"name"`
}

type membershipView struct {
	UserID         string  `json:"userId"`
	RestaurantID   *string `json:"restaurantId"`
	OrganizationID *string `json:"organizationId"`
	Role           string  `json:"role"`
}

// listPage reads limit and cursor, asks load for one row more than the page
// and answers the page with nextCursor (null on the last page). key is the
// position of a row; K its type.
func listPage[T, V any, K comparable](c *fiber.Ctx, codec *cursor.Codec, name string,
	load func(after K, limit int) ([]T, error), key func(T) K, view func(T) V) error {
	q, err := url.ParseQuery(string(c.Request().URI().QueryString()))
	if err != nil {
		return httpx.BadRequest("The query string is malformed.")
	}
	if k, _ := httpx.AllowQuery(q, false, "limit", "cursor"); k != "" {
		return httpx.BadRequest("Query parameter %q is not supported; use limit and cursor.", k)
	}
	limit := DefaultPageSize
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxPageSize {
			return httpx.BadRequest("limit: must be an integer from 1 to %d.", MaxPageSize)
		}
		limit = n
	}
	binding := "admin/" + name
	var after K
	if s := q.Get("cursor"); s != "" {
		if err := codec.Decode(s, binding, &after); err != nil {
			if errors.Is(err, cursor.ErrFilterMismatch) {
				return httpx.BadRequest("cursor was issued for another list; start without a cursor.")
			}
			return httpx.BadRequest("cursor is invalid; pass nextCursor unchanged.")
		}
	}
	rows, err := load(after, limit+1)
	if err != nil {
		return err
	}
	var next *string
	if len(rows) > limit {
		rows = rows[:limit]
		s, err := codec.Encode(binding, key(rows[limit-1]))
		if err != nil {
			return err
		}
		next = &s
	}
	out := make([]V, len(rows))
	for i, r := range rows {
		out[i] = view(r)
	}
	return c.JSON(fiber.Map{"data": out, "nextCursor": next})
}

func (a admin) listOrganizations(c *fiber.Ctx) error {
	return listPage(c, a.cursors, "organizations",
		func(after string, limit int) ([]domain.Organization, error) {
			return a.repo.ListOrganizations(c.UserContext(), after, limit)
		},
		func(o domain.Organization) string { return o.ID },
		func(o domain.Organization) organizationView {
			return organizationView{OrganizationID: o.ID, Name: o.Name, RegisteredName: o.RegisteredName, BusinessID: o.BusinessID}
		})
}

func (a admin) listRestaurants(c *fiber.Ctx) error {
	return listPage(c, a.cursors, "restaurants",
		func(after string, limit int) ([]domain.Restaurant, error) {
			return a.repo.ListRestaurants(c.UserContext(), after, limit)
		},
		func(r domain.Restaurant) string { return r.ID },
		func(r domain.Restaurant) restaurantView {
			orgs := r.OrganizationIDs
			if orgs == nil {
				orgs = []string{}
			}
			return restaurantView{RestaurantID: r.ID, Name: r.Name, TimeZone: r.TimeZone, DayStartHour: r.DayStartHour, Currency: r.Currency,
				Country: r.Country, RegisteredName: r.RegisteredName, BusinessID: r.BusinessID, OrganizationIDs: orgs}
		})
}

func (a admin) listUsers(c *fiber.Ctx) error {
	return listPage(c, a.cursors, "users",
		func(after string, limit int) ([]domain.User, error) {
			return a.repo.ListUsers(c.UserContext(), after, limit)
		},
		func(u domain.User) string { return u.ID },
		func(u domain.User) userView { return userView{UserID: u.ID, Email: u.Email, Name: u.Name} })
}

func (a admin) listMemberships(c *fiber.Ctx) error {
	return listPage(c, a.cursors, "memberships",
		func(after int64, limit int) ([]domain.Membership, error) {
			return a.repo.ListMemberships(c.UserContext(), after, limit)
		},
		func(m domain.Membership) int64 { return m.ID },
		func(m domain.Membership) membershipView {
			v := membershipView{UserID: m.UserID, Role: m.Role}
			if m.RestaurantID != "" {
				v.RestaurantID = &m.RestaurantID
			} else {
				v.OrganizationID = &m.OrganizationID
			}
			return v
		})
}
