package domain

import (
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/text/currency"
	"golang.org/x/text/language"

	"partnerapi.dev/services/contracts"
)

// The directory import is the shared contract (services/contracts): the
// seed writes it, the admin API decodes it, and ValidateImport holds it to
// identity's rules before the store writes it.
type (
	DirectoryImport     = contracts.Directory
	ImportUser          = contracts.DirectoryUser
	ImportOrganization  = contracts.DirectoryOrganization
	ImportRestaurant    = contracts.DirectoryRestaurant
	ImportMembership    = contracts.DirectoryMembership
	ImportPartnerClient = contracts.DirectoryPartnerClient
)

// ImportResult counts what an import upserted.
type ImportResult struct {
	Users          int `json:"users"`
	Organizations  int `json:"organizations"`
	Restaurants    int `json:"restaurants"`
	Memberships    int `json:"memberships"`
	PartnerClients int `json:"partnerClients"`
}

type problems []string

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// ValidateImport checks the whole document and names every bad field.
func ValidateImport(d DirectoryImport) error {
	var p problems
	userIDs := map[string]bool{}
	emails := map[string]bool{}
	for i, u := range d.Users {
		f := fmt.Sprintf("users[%d]", i)
		checkUUID(&p, f+".userId", u.UserID)
		if userIDs[u.UserID] {
			p.add("%s.userId: %q appears twice", f, u.UserID)
		}
		userIDs[u.UserID] = true
		if a, err := mail.ParseAddress(u.Email); err != nil || a.Address != u.Email {
			p.add("%s.email: must be a plain email address", f)
		} else if emails[strings.ToLower(u.Email)] {
			p.add("%s.email: %q appears twice", f, u.Email)
		}
		emails[strings.ToLower(u.Email)] = true
		checkText(&p, f+".name", u.Name)
		if len(u.Password) < 8 || len(u.Password) > 200 {
			p.add("%s.password: must be 8 to 200 characters", f)
		}
	}
	orgIDs := map[string]bool{}
	for i, o := range d.Organizations {
		f := fmt.Sprintf("organizations[%d]", i)
		checkUUID(&p, f+".organizationId", o.OrganizationID)
		if orgIDs[o.OrganizationID] {
			p.add("%s.organizationId: %q appears twice", f, o.OrganizationID)
		}
		orgIDs[o.OrganizationID] = true
		checkText(&p, f+".name", o.Name)
		checkText(&p, f+".registeredName", o.RegisteredName)
		checkText(&p, f+".businessId", o.BusinessID)
	}
	restIDs := map[string]bool{}
	for i, r := range d.Restaurants {
		f := fmt.Sprintf("restaurants[%d]", i)
		checkUUID(&p, f+".restaurantId", r.RestaurantID)
		if restIDs[r.RestaurantID] {
			p.add("%s.restaurantId: %q appears twice", f, r.RestaurantID)
		}
		restIDs[r.RestaurantID] = true
		checkText(&p, f+".name", r.Name)
		checkText(&p, f+".registeredName", r.RegisteredName)
		checkText(&p, f+".businessId", r.BusinessID)
		if ve := (*ValidationError)(nil); errors.As(ValidateRestaurantSettings(r.TimeZone, r.DayStartHour, r.Currency, r.Country), &ve) {
			for _, s := range ve.Problems {
				p.add("%s.%s", f, s)
			}
		}
		for j, o := range r.OrganizationIDs {
			checkUUID(&p, fmt.Sprintf("%s.organizationIds[%d]", f, j), o)
		}
	}
	for i, m := range d.Memberships {
		f := fmt.Sprintf("memberships[%d]", i)
		checkUUID(&p, f+".userId", m.UserID)
		switch {
		case (m.RestaurantID == nil) == (m.OrganizationID == nil):
			p.add("%s: set exactly one of restaurantId and organizationId", f)
		case m.RestaurantID != nil:
			checkUUID(&p, f+".restaurantId", *m.RestaurantID)
			if m.Role != "owner" {
				p.add("%s.role: a restaurant membership's role must be \"owner\"", f)
			}
		default:
			checkUUID(&p, f+".organizationId", *m.OrganizationID)
			if m.Role != "admin" && m.Role != "owner" {
				p.add("%s.role: an organization membership's role must be \"admin\" or \"owner\"", f)
			}
		}
	}
	clientIDs := map[string]bool{}
	for i, c := range d.PartnerClients {
		f := fmt.Sprintf("partnerClients[%d]", i)
		if clientIDs[c.ClientID] {
			p.add("%s.clientId: %q appears twice", f, c.ClientID)
		}
		clientIDs[c.ClientID] = true
		if ve := (*ValidationError)(nil); errors.As(ValidateClient(c.ClientID, c.Name, c.Type, c.RedirectURIs, c.AllowedScopes, c.Status), &ve) {
			for _, s := range ve.Problems {
				p.add("%s.%s", f, s)
			}
		}
		switch {
		case c.Type == ClientConfidential && (c.Secret == nil || len(*c.Secret) < 16):
			p.add("%s.secret: a confidential client needs a secret of at least 16 characters", f)
		case c.Type == ClientPublic && c.Secret != nil:
			p.add("%s.secret: a public client has no secret; send null", f)
		}
	}
	if len(p) > 0 {
		return &ValidationError{Problems: p}
	}
	return nil
}

// ValidateRestaurantSettings checks a restaurant's time zone, day start hour,
// currency (ISO 4217) and country (ISO 3166-1 alpha-2).
func ValidateRestaurantSettings(tz string, dayStart *int, cur, country string) error {
	var p problems
	if tz == "" || tz == "Local" {
		p.add("timeZone: must be an IANA time zone name such as Europe/Helsinki")
	} else if _, err := time.LoadLocation(tz); err != nil {
		p.add("timeZone: unknown time zone %q", tz)
	}
	if dayStart == nil || *dayStart < 0 || *dayStart > 23 {
		p.add("dayStartHour: must be an integer from 0 to 23")
	}
	if u, err := currency.ParseISO(cur); err != nil || len(cur) != 3 || u.String() != cur {
		p.add("currency: must be an ISO 4217 code in capitals such as EUR")
	}
	if r, err := language.ParseRegion(country); err != nil || len(country) != 2 || !r.IsCountry() || r.String() != country {
		p.add("country: must be an ISO 3166-1 alpha-2 code in capitals such as FI")
	}
	if len(p) > 0 {
		return &ValidationError{Problems: p}
	}
	return nil
}

// ValidateClient checks a partner client's registration.
func ValidateClient(id, name, typ string, redirects, scopes []string, status string) error {
	var p problems
	if len(id) < 3 || len(id) > 100 || strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != "" {
		p.add("clientId: must be 3 to 100 letters, digits, '-', '_' or '.'")
	}
	checkText(&p, "name", name)
	if typ != ClientPublic && typ != ClientConfidential {
		p.add("type: must be \"public\" or \"confidential\"")
	}
	if status != ClientApproved && status != ClientSuspended && status != ClientPending {
		p.add("status: must be \"approved\", \"suspended\" or \"pending\"")
	}
	if err := ValidateRedirectURIs(redirects); err != nil {
		p.add("%s", err.Error())
	}
	if err := ValidateScopes(scopes); err != nil {
		p.add("%s", err.Error())
	}
	if len(p) > 0 {
		return &ValidationError{Problems: p}
	}
	return nil
}

// ValidateRedirectURIs checks that every URI is absolute, without fragment,
// and https unless it points at a loopback address.
func ValidateRedirectURIs(uris []string) error {
	if len(uris) == 0 {
		return Invalid("redirectUris: list at least one redirect URI")
	}
	for i, s := range uris {
		u, err := url.Parse(s)
		if err != nil || !u.IsAbs() || u.Host == "" || u.Fragment != "" {
			return Invalid("redirectUris[%d]: must be an absolute URI without fragment", i)
		}
		host := u.Hostname()
		loopback := host == "127.0.0.1" || host == "::1" || host == "localhost"
		if u.Scheme != "https" && !(u.Scheme == "http" && loopback) {
			return Invalid("redirectUris[%d]: must use https (http only for loopback addresses)", i)
		}
	}
	return nil
}

// ValidateScopes checks a client's allowed scopes.
func ValidateScopes(scopes []string) error {
	if len(scopes) == 0 {
		return Invalid("allowedScopes: list at least one scope")
	}
	for i, s := range scopes {
		if !IsKnownScope(s) {
			return Invalid("allowedScopes[%d]: unknown scope %q", i, s)
		}
		if slices.Index(scopes, s) != i {
			return Invalid("allowedScopes[%d]: %q appears twice", i, s)
		}
	}
	return nil
}

func checkUUID(p *problems, field, v string) {
	if u, err := uuid.Parse(v); err != nil || u.String() != strings.ToLower(v) || len(v) != 36 {
		p.add("%s: must be a UUID", field)
	}
}

func checkText(p *problems, field, v string) {
	if strings.TrimSpace(v) == "" || len(v) > 200 {
		p.add("%s: must be 1 to 200 characters", field)
	}
}
