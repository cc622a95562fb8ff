package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"partnerapi.dev/pkg/cursor"
	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/identity/internal/domain"
	"partnerapi.dev/services/identity/internal/oauth"
)

type admin struct {
	repo    domain.Repository
	cursors *cursor.Codec
	keys    *oauth.Keys
}

func (a admin) importDirectory(c *fiber.Ctx) error {
	var d domain.DirectoryImport
	if err := httpx.DecodeJSON(c, &d); err != nil {
		return err
	}
	res, err := a.repo.Import(c.UserContext(), d)
	if err != nil {
		return err
	}
	return httpx.Data(c, res)
}

// importOne runs a one-element import and answers 201 with the element.
func (a admin) importOne(c *fiber.Ctx, d domain.DirectoryImport, out any) error {
	if _, err := a.repo.Import(c.UserContext(), d); err != nil {
		return err
	}
	return httpx.Data(c.Status(http.StatusCreated), out)
}

func (a admin) createUser(c *fiber.Ctx) error {
	var u domain.ImportUser
	if err := httpx.DecodeJSON(c, &u); err != nil {
		return err
	}
	if u.UserID == "" {
		u.UserID = uuid.NewString()
	}
	out := fiber.Map{"userId": u.UserID, "email": u.Email, "name": u.Name}
	return a.importOne(c, domain.DirectoryImport{Users: []domain.ImportUser{u}}, out)
}

func (a admin) createOrganization(c *fiber.Ctx) error {
	var o domain.ImportOrganization
	if err := httpx.DecodeJSON(c, &o); err != nil {
		return err
	}
	if o.OrganizationID == "" {
		o.OrganizationID = uuid.NewString()
	}
	return a.importOne(c, domain.DirectoryImport{Organizations: []domain.ImportOrganization{o}}, o)
}

func (a admin) createRestaurant(c *fiber.Ctx) error {
	var r domain.ImportRestaurant
	if err := httpx.DecodeJSON(c, &r); err != nil {
		return err
	}
	if r.RestaurantID == "" {
		r.RestaurantID = uuid.NewString()
	}
	return a.importOne(c, domain.DirectoryImport{Restaurants: []domain.ImportRestaurant{r}}, r)
}

func (a admin) createMembership(c *fiber.Ctx) error {
	var m domain.ImportMembership
	if err := httpx.DecodeJSON(c, &m); err != nil {
		return err
	}
	return a.importOne(c, domain.DirectoryImport{Memberships: []domain.ImportMembership{m}}, m)
}

func (a admin) listClients(c *fiber.Ctx) error {
	l, err := a.repo.Clients(c.UserContext())
	if err != nil {
		return err
	}
	return httpx.Data(c, l)
}

func (a admin) getClient(c *fiber.Ctx) error {
	pc, err := a.repo.Client(c.UserContext(), c.Params("clientId"))
	if err != nil {
		return err
	}
	return httpx.Data(c, pc)
}

func (a admin) createClient(c *fiber.Ctx) error {
	var n domain.NewClient
	if err := httpx.DecodeJSON(c, &n); err != nil {
		return err
	}
	pc, secret, err := a.repo.CreateClient(c.UserContext(), n)
	if err != nil {
		return err
	}
	out := struct {
		domain.PartnerClient
		ClientSecret string `json:"clientSecret,omitempty"`
	}{pc, secret}
	return httpx.Data(c.Status(http.StatusCreated), out)
}

func (a admin) updateClient(c *fiber.Ctx) error {
	var u domain.ClientUpdate
	if err := httpx.DecodeJSON(c, &u); err != nil {
		return err
	}
	pc, err := a.repo.UpdateClient(c.UserContext(), c.Params("clientId"), u)
	if err != nil {
		return err
	}
	return httpx.Data(c, pc)
}

// rotateClientSecret sets a confidential client's secret; the previous one keeps
// working for overlapSeconds. The answer is the client, never a secret.
func (a admin) rotateClientSecret(c *fiber.Ctx) error {
	var in struct {
		ClientSecret   string `json:"clientSecret"`
		OverlapSeconds int64  `json:"overlapSeconds"`
	}
	if err := httpx.DecodeJSON(c, &in); err != nil {
		return err
	}
	pc, err := a.repo.RotateClientSecret(c.UserContext(), c.Params("clientId"), in.ClientSecret, time.Duration(in.OverlapSeconds)*time.Second)
	if err != nil {
		return err
	}
	return httpx.Data(c, pc)
}

func (a admin) setClientStatus(status string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		pc, err := a.repo.UpdateClient(c.UserContext(), c.Params("clientId"), domain.ClientUpdate{Status: &status})
		if err != nil {
			return err
		}
		return httpx.Data(c, pc)
	}
}

func (a admin) listGrants(c *fiber.Ctx) error {
	if u := c.Query("userId"); u != "" && !domain.CanonicalID(u) {
		return domain.Invalid("userId: must be a UUID in lower case, as ids are shown")
	}
	l, err := a.repo.Grants(c.UserContext(), c.Query("clientId"), c.Query("userId"))
	if err != nil {
		return err
	}
	return httpx.Data(c, l)
}

func (a admin) getGrant(c *fiber.Ctx) error {
	if !domain.CanonicalID(c.Params("grantId")) {
		return httpx.NotFound()
	}
	g, err := loadGrantView(c.UserContext(), a.repo, c.Params("grantId"))
	if err != nil {
		return err
	}
	return httpx.Data(c, g)
}

func (a admin) revokeGrant(c *fiber.Ctx) error {
	if !domain.CanonicalID(c.Params("grantId")) {
		return httpx.NotFound()
	}
	g, err := a.repo.RevokeGrant(c.UserContext(), c.Params("grantId"), contracts.RevokedByOperator)
	if err != nil {
		return err
	}
	return httpx.Data(c, g)
}

// endUserSessions is DELETE /admin/v1/users/{userId}/sessions: the user is
// signed out of the pages on every device at once; the answer says how
// many sessions ended. A user who does not exist has none.
func (a admin) endUserSessions(c *fiber.Ctx) error {
	id := c.Params("userId")
	if !domain.CanonicalID(id) {
		return httpx.NotFound()
	}
	n, err := a.repo.EndUserSessions(c.UserContext(), id)
	if err != nil {
		return err
	}
	return httpx.Data(c, fiber.Map{"userId": id, "endedSessions": n})
}

func (a admin) listKeys(c *fiber.Ctx) error {
	set, err := a.keys.JWKS(c.UserContext())
	if err != nil {
		return err
	}
	active, _ := a.keys.ActiveKid(c.UserContext())
	b, _ := json.Marshal(set)
	return httpx.Data(c, fiber.Map{"activeKid": active, "jwks": json.RawMessage(b)})
}

func (a admin) rotateKeys(c *fiber.Ctx) error {
	kid, err := a.keys.Rotate(c.UserContext())
	if err != nil {
		return err
	}
	return httpx.Data(c, fiber.Map{"activeKid": kid})
}

// connectedAppView is one connected app as the admin API lists it.
type connectedAppView struct {
	domain.Grant
	ClientName    string       `json:"clientName"`
	ApprovedBy    approverView `json:"approvedBy"`
	Restaurants   []namedView  `json:"restaurants"`
	Organizations []namedView  `json:"organizations"`
}

type approverView struct {
	UserID string `json:"userId"`
	Name   string `json:"name"`
	Email  string `json:"email"`
}

type namedView struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// listConnectedApps is GET /admin/v1/connected-apps?userId=… (what the
// connected-apps page shows that user) or ?restaurantId=… (every grant
// that covers the restaurant now), newest first.
func (a admin) listConnectedApps(c *fiber.Ctx) error {
	ctx := c.UserContext()
	userID, restaurantID := c.Query("userId"), c.Query("restaurantId")
	var reach domain.Reach
	switch {
	case (userID == "") == (restaurantID == ""):
		return domain.Invalid("give exactly one of userId and restaurantId")
	case userID != "":
		if !domain.CanonicalID(userID) {
			return domain.Invalid("userId: must be a UUID in lower case, as ids are shown")
		}
		var err error
		if reach, err = a.repo.Reach(ctx, userID); err != nil {
			return err
		}
	default:
		if !domain.CanonicalID(restaurantID) {
			return domain.Invalid("restaurantId: must be a UUID in lower case, as ids are shown")
		}
		reach = domain.Reach{Restaurants: map[string]bool{restaurantID: true}, Organizations: map[string]bool{}}
	}
	apps, _, err := connectedApps(ctx, a.repo, reach)
	if err != nil {
		return err
	}
	out := make([]connectedAppView, 0, len(apps))
	for _, app := range apps {
		v := connectedAppView{Grant: app.Coverage.Grant, ClientName: app.ClientName,
			ApprovedBy:  approverView{UserID: app.ApprovedBy.ID, Name: app.ApprovedBy.Name, Email: app.ApprovedBy.Email},
			Restaurants: []namedView{}, Organizations: []namedView{}}
		for _, r := range app.Coverage.Restaurants {
			if !slices.ContainsFunc(v.Restaurants, func(x namedView) bool { return x.ID == r.ID }) {
				v.Restaurants = append(v.Restaurants, namedView{ID: r.ID, Name: r.Name})
			}
		}
		for _, o := range app.Coverage.Organizations {
			v.Organizations = append(v.Organizations, namedView{ID: o.OrganizationID, Name: o.Name})
		}
		out = append(out, v)
	}
	return c.JSON(fiber.Map{"data": out})
}
