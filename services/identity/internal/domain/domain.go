// Package domain holds the identity service's words: the directory of users,
// organizations and restaurants, partner clients, and grants (an owner's
// approval of a partner). It imports neither Fiber nor gorm.
package domain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"partnerapi.dev/pkg/fault"
	"partnerapi.dev/services/contracts"
)

// ScopeWords returns the plain description of a scope.
func ScopeWords(s string) string {
	for _, k := range contracts.Scopes {
		if k.Name == s {
			return k.Words
		}
	}
	return s
}

// IsKnownScope reports whether s is a scope of the API.
func IsKnownScope(s string) bool {
	return slices.ContainsFunc(contracts.Scopes, func(k contracts.Scope) bool { return k.Name == s })
}

// Boundary is what a grant covers.
type Boundary string

const (
	BoundaryRestaurant   Boundary = "restaurant"
	BoundaryOrganization Boundary = "organization"
)

// Client statuses and types.
const (
	ClientApproved     = "approved"
	ClientSuspended    = "suspended"
	ClientPending      = "pending"
	ClientPublic       = "public"
	ClientConfidential = "confidential"
)

// Errors of a kind (pkg/fault) that the HTTP layer answers alike in every
// service.
var (
	ErrNotFound = fault.New(fault.NotFound, "not found")
	ErrConflict = fault.New(fault.Conflict, "A resource with this id already exists.")
	// ErrGrantNotActive refuses to extend a revoked or expired grant.
	ErrGrantNotActive = fault.New(fault.Conflict, "This authorization is no longer active.")
)

// ValidationError is a client mistake, named by field.
type ValidationError struct{ Problems []string }

func (e *ValidationError) Error() string { return strings.Join(e.Problems, "; ") }

// Kind makes a ValidationError a 400 listing its problems.
func (e *ValidationError) Kind() fault.Kind { return fault.Invalid }

// Invalid builds a ValidationError.
func Invalid(format string, args ...any) error {
	return &ValidationError{Problems: []string{fmt.Sprintf(format, args...)}}
}

// PartnerClient is a registered partner integration.
type PartnerClient struct {
	ClientID      string   `json:"clientId"`
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	RedirectURIs  []string `json:"redirectUris"`
	AllowedScopes []string `json:"allowedScopes"`
	Status        string   `json:"status"`
	SecretHash    string   `json:"-"`
	// PreviousSecretHash is the secret rotated out, while its overlap lasts.
	PreviousSecretHash string    `json:"-"`
	CreatedAt          time.Time `json:"createdAt"`
	UpdatedAt          time.Time `json:"updatedAt"`
}

// User is a person who signs in to approve partners.
type User struct {
	ID           string
	Email        string
	Name         string
	PasswordHash string
}

// Grant is one approval by one user for one partner client.
type Grant struct {
	ID         string     `json:"grantId"`
	ClientID   string     `json:"clientId"`
	UserID     string     `json:"userId"`
	Scopes     []string   `json:"scopes"`
	Boundary   Boundary   `json:"boundary"`
	CreatedAt  time.Time  `json:"createdAt"`
	ExpiresAt  time.Time  `json:"expiresAt"`
	RevokedAt  *time.Time `json:"revokedAt"`
	LastUsedAt *time.Time `json:"lastUsedAt"` // the minute of the latest request it authorized, as the gateway records it; nil: none yet
	Status     string     `json:"status"`
	Restaurant []string   `json:"restaurantIds,omitempty"`
	Orgs       []string   `json:"organizationIds,omitempty"`
}

// StatusAt tells whether the grant is active, revoked or expired at now.
func (g Grant) StatusAt(now time.Time) string {
	switch {
	case g.RevokedAt != nil:
		return "revoked"
	case !now.Before(g.ExpiresAt):
		return "expired"
	}
	return "active"
}

// ApprovedScopes computes what a grant may hold: the requested scopes (or the
// default scope when none were requested) that the client may ask for, with
// svc.organization.read kept only for an organization boundary.
func ApprovedScopes(requested, allowed []string, b Boundary) []string {
	if len(requested) == 0 {
		requested = []string{contracts.ScopeRestaurantRead}
	}
	var out []string
	for _, s := range requested {
		if !slices.Contains(allowed, s) || slices.Contains(out, s) {
			continue
		}
		if s == contracts.ScopeOrganizationRead && b != BoundaryOrganization {
			continue
		}
		out = append(out, s)
	}
	return out
}

// ConsentOptions is what a user may approve for a partner.
type ConsentOptions struct {
	Restaurants   []RestaurantOption
	Organizations []OrganizationOption
}

// RestaurantOption is a restaurant the user owns.
type RestaurantOption struct{ ID, Name string }

// OrganizationOption is an organization the user administers.
type OrganizationOption struct {
	ID, Name, Role  string
	RestaurantCount int
}

// GrantRequest is what the consent page asks the store to record.
type GrantRequest struct {
	ClientID        string
	UserID          string
	Scopes          []string
	Boundary        Boundary
	RestaurantID    string
	OrganizationIDs []string
	ExpiresAt       time.Time
}

// CanonicalID reports whether s is a UUID spelled the one way ids are
// stored and shown: lower-case hexadecimal in 8-4-4-4-12 groups. Any other
// spelling (upper case, braces, urn:uuid:, no dashes) names nothing.
func CanonicalID(s string) bool {
	u, err := uuid.Parse(s)
	return err == nil && u.String() == s
}
