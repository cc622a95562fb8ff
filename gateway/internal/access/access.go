// Package access decides whether a verified access token may call one
// partner operation: its owner's grant, the scopes, and the restaurant and
// organization boundary (docs/gateway.md, "What it checks, in order"). It
// does no I/O: the caller brings the token, the grant and the request's
// parameters, and maps a Refusal to its HTTP answer.
package access

import (
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"partnerapi.dev/gateway/internal/auth"
	"partnerapi.dev/gateway/internal/grants"
	"partnerapi.dev/gateway/internal/routes"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/contracts"
)

// Kind says how a refusal is answered.
type Kind int

const (
	// InvalidToken: 401, the token cannot be used (revoked, not matching its grant).
	InvalidToken Kind = iota + 1
	// InsufficientScope: 403 naming Scopes, the scopes the operation needs.
	InsufficientScope
	// NotFound: 404, the same answer as for an unknown restaurant.
	NotFound
	// Invalid: 400 invalid_request.
	Invalid
)

// Refusal is why a request may not go on.
type Refusal struct {
	Kind        Kind
	Description string
	// Scopes are the scopes the operation needs (InsufficientScope).
	Scopes []string
}

func (r *Refusal) Error() string { return r.Description }

// DescriptionRevoked is the description for a grant that no longer holds.
const DescriptionRevoked = "The authorization expired or was revoked. Ask the restaurant owner or administrator to approve the integration again."

// MaxOpaqueID is the longest opaque id the API accepts (e.g. orderId).
const MaxOpaqueID = 255

// Request is one partner request with a verified token.
type Request struct {
	Operation routes.Operation
	Token     *auth.Token
	// Grant is the owner's approval the token was issued under.
	Grant *grants.Grant
	Now   time.Time
	// Param returns a path parameter as the client sent it.
	Param func(name string) string
	// OrganizationIDs are the request's organization_id query values.
	OrganizationIDs []string
}

// Decide returns the internal context the request is forwarded with (the
// caller adds the request id), or a *Refusal.
func Decide(r Request) (internalctx.Context, error) {
	tok, grant, op := r.Token, r.Grant, r.Operation
	ic := internalctx.Context{ClientID: tok.ClientID, UserID: tok.Subject, GrantID: tok.GrantID}
	if grant.ClientID != tok.ClientID || grant.UserID != tok.Subject {
		return ic, &Refusal{Kind: InvalidToken, Description: "The access token does not match its authorization."}
	}
	if grant.Revokes(tok.ID, tok.Family) {
		return ic, &Refusal{Kind: InvalidToken, Description: "The access token was revoked; obtain a new one."}
	}
	needed := NeededScopes(op, grant)
	if !grant.Usable(r.Now) {
		return ic, &Refusal{Kind: InsufficientScope, Scopes: needed, Description: DescriptionRevoked}
	}
	var missing []string
	for _, s := range needed {
		if !tok.HasScope(s) || !grant.HasScope(s) {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return ic, &Refusal{Kind: InsufficientScope, Scopes: needed,
			Description: fmt.Sprintf("This operation needs the scope(s) %s, which this authorization does not grant.", strings.Join(missing, ", "))}
	}
	ic.Scopes = effectiveScopes(tok, grant)
	if op.RestaurantScoped {
		if err := boundary(r, &ic); err != nil {
			return ic, err
		}
	}
	return ic, nil
}

// NeededScopes are the operation's scopes, plus svc.organization.read for an
// organization-boundary grant on restaurant-scoped calls and the restaurant
// list. A nil grant gives the operation's own scopes.
func NeededScopes(op routes.Operation, grant *grants.Grant) []string {
	needed := append([]string{}, op.Scopes...)
	if grant != nil && grant.Boundary == "organization" && (op.RestaurantScoped || op.ListsRestaurants) {
		for _, s := range needed {
			if s == contracts.ScopeOrganizationRead {
				return needed
			}
		}
		needed = append(needed, contracts.ScopeOrganizationRead)
	}
	return needed
}

// effectiveScopes are the token's scopes that the grant still holds.
func effectiveScopes(tok *auth.Token, grant *grants.Grant) []string {
	out := make([]string, 0, len(tok.Scopes))
	for _, s := range tok.Scopes {
		if grant.HasScope(s) {
			out = append(out, s)
		}
	}
	return out
}

var notFound = &Refusal{Kind: NotFound, Description: "The requested resource does not exist or is outside the authorization."}

func invalid(format string, args ...any) *Refusal {
	return &Refusal{Kind: Invalid, Description: fmt.Sprintf(format, args...)}
}

// boundary applies the restaurant and organization_id rules. Anything
// outside the grant is refused like an unknown restaurant.
func boundary(r Request, ic *internalctx.Context) error {
	op, grant := r.Operation, r.Grant
	for _, p := range op.UUIDParams {
		if !isUUID(r.Param(p)) {
			return notFound
		}
	}
	for _, p := range op.OpaqueParams {
		if v, _ := url.PathUnescape(r.Param(p)); utf8.RuneCountInString(v) > MaxOpaqueID {
			return invalid("%s must be at most %d characters.", p, MaxOpaqueID)
		}
	}
	rid := strings.ToLower(r.Param("restaurantId"))
	restaurant := grant.Restaurant(rid)
	if restaurant == nil {
		return notFound
	}
	if len(r.OrganizationIDs) > 1 {
		return invalid("Pass organization_id at most once.")
	}
	var orgParam string
	if len(r.OrganizationIDs) == 1 {
		orgParam = strings.ToLower(r.OrganizationIDs[0])
	}
	if orgParam != "" && !isUUID(orgParam) {
		return invalid("organization_id must be an organizationId (a UUID) returned by GET /v1/organizations.")
	}
	if grant.Boundary == "organization" {
		if orgParam == "" {
			if len(grant.Organizations) > 1 {
				return invalid("organization_id is required: this authorization covers several organizations. Pass the organizationId from GET /v1/organizations that contains the restaurant.")
			}
			if len(grant.Organizations) == 1 {
				orgParam = grant.Organizations[0].OrganizationID
			}
		}
		org := grant.Organization(orgParam)
		if org == nil || !containsFold(org.RestaurantIDs, rid) {
			return notFound
		}
		ic.OrganizationID = org.OrganizationID
	} else if orgParam != "" {
		if !containsFold(restaurant.OrganizationIDs, orgParam) {
			return notFound
		}
		ic.OrganizationID = orgParam
	}
	ic.Tenant = &internalctx.Tenant{ID: restaurant.RestaurantID, TimeZone: restaurant.TimeZone, DayStartHour: restaurant.DayStartHour,
		Currency: restaurant.Currency, Country: restaurant.Country}
	return nil
}

func containsFold(list []string, v string) bool {
	for _, x := range list {
		if strings.EqualFold(x, v) {
			return true
		}
	}
	return false
}

// isUUID accepts the canonical 8-4-4-4-12 hexadecimal form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		ch := s[i]
		switch i {
		case 8, 13, 18, 23:
			if ch != '-' {
				return false
			}
		default:
			if !('0' <= ch && ch <= '9' || 'a' <= ch && ch <= 'f' || 'A' <= ch && ch <= 'F') {
				return false
			}
		}
	}
	return true
}
