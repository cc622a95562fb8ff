package api

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"partnerapi.dev/pkg/cursor"
	"partnerapi.dev/pkg/httpx"
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
	return c.JSON(fiber.Map{"data": res})
}

// importOne runs a one-element import and answers 201 with the element.
func (a admin) importOne(c *fiber.Ctx, d domain.DirectoryImport, out any) error {
	if _, err := a.repo.Import(c.UserContext(), d); err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(fiber.Map{"data": out})
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
	return c.JSON(fiber.Map{"data": l})
}

func (a admin) getClient(c *fiber.Ctx) error {
	pc, err := a.repo.Client(c.UserContext(), c.Params("clientId"))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"data": pc})
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
	return c.Status(http.StatusCreated).JSON(fiber.Map{"data": out})
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
	return c.JSON(fiber.Map{"data": pc})
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
	return c.JSON(fiber.Map{"data": pc})
}

func (a admin) setClientStatus(status string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		pc, err := a.repo.UpdateClient(c.UserContext(), c.Params("clientId"), domain.ClientUpdate{Status: &status})
		if err != nil {
			return err
		}
		return c.JSON(fiber.Map{"data": pc})
	}
}

func (a admin) listGrants(c *fiber.Ctx) error {
	l, err := a.repo.Grants(c.UserContext(), c.Query("clientId"), c.Query("userId"))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"data": l})
}

func (a admin) getGrant(c *fiber.Ctx) error {
	g, err := loadGrantView(c.UserContext(), a.repo, c.Params("grantId"))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"data": g})
}

func (a admin) revokeGrant(c *fiber.Ctx) error {
	g, err := a.repo.RevokeGrant(c.UserContext(), c.Params("grantId"))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"data": g})
}

func (a admin) listKeys(c *fiber.Ctx) error {
	set, err := a.keys.JWKS(c.UserContext())
	if err != nil {
		return err
	}
	active, _ := a.keys.ActiveKid(c.UserContext())
	b, _ := json.Marshal(set)
	return c.JSON(fiber.Map{"data": fiber.Map{"activeKid": active, "jwks": json.RawMessage(b)}})
}

func (a admin) rotateKeys(c *fiber.Ctx) error {
	kid, err := a.keys.Rotate(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"data": fiber.Map{"activeKid": kid}})
}
