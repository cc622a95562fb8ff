package domain

import (
	"context"
	"time"

	"partnerapi.dev/services/contracts"
)

// Repository is what the HTTP surface needs from storage; the store
// implements it. fosite's token storage is not part of it: it speaks
// fosite's own interfaces and lives with the store.
type Repository interface {
	Directory
	Sessions
	Clients
	Grants
}

// Sessions are the signed-in browser sessions of the pages, by the SHA-256
// of the cookie's id in hexadecimal.
type Sessions interface {
	// StartSession records a session of userID that ends after idle
	// without a page, or max after it started.
	StartSession(ctx context.Context, idHash string, userID string, idle, max time.Duration) error
	// TouchSession returns the user of a live session and starts its idle
	// lifetime again; ErrNotFound when it ended or never was.
	TouchSession(ctx context.Context, idHash string, idle time.Duration) (userID string, err error)
	EndSession(ctx context.Context, idHash string) error
	// EndUserSessions ends every session of a user and answers how many
	// there were.
	EndUserSessions(ctx context.Context, userID string) (int64, error)
}

// Directory is the people and places: import, sign-in and the operator's
// lists.
type Directory interface {
	// Import upserts a validated directory document by id, in one
	// transaction.
	Import(ctx context.Context, d DirectoryImport) (ImportResult, error)
	UserByEmail(ctx context.Context, email string) (User, error)
	UserByID(ctx context.Context, id string) (User, error)
	// StartSignIn records an attempt as a failure, then counts the
	// failures within window, the attempt included.
	StartSignIn(ctx context.Context, email string, window time.Duration) (attempt int64, failures int, err error)
	ForgetSignInAttempt(ctx context.Context, attempt int64) error
	ClearSignInFailures(ctx context.Context, email string) error

	// The operator's lists return up to limit entries after the key after
	// ("" for the first page), in key order.
	ListOrganizations(ctx context.Context, after string, limit int) ([]Organization, error)
	ListRestaurants(ctx context.Context, after string, limit int) ([]Restaurant, error)
	ListUsers(ctx context.Context, after string, limit int) ([]User, error)
	ListMemberships(ctx context.Context, after int64, limit int) ([]Membership, error)
}

// Clients is the partner client registry.
type Clients interface {
	Client(ctx context.Context, id string) (PartnerClient, error)
	Clients(ctx context.Context) ([]PartnerClient, error)
	// CreateClient registers a client; for a confidential one it returns
	// the generated secret, shown once.
	CreateClient(ctx context.Context, c NewClient) (PartnerClient, string, error)
	UpdateClient(ctx context.Context, id string, u ClientUpdate) (PartnerClient, error)
	// RotateClientSecret makes secret a confidential client's secret; the
	// previous one keeps working for overlap (none when zero).
	RotateClientSecret(ctx context.Context, id, secret string, overlap time.Duration) (PartnerClient, error)
}

// Grants are the owners' approvals and what they cover.
type Grants interface {
	ConsentOptions(ctx context.Context, userID string) (ConsentOptions, error)
	SaveConsentRequest(ctx context.Context, c ConsentRequest) error
	// TakeConsentRequest removes and returns a consent request once, or
	// ErrNotFound.
	TakeConsentRequest(ctx context.Context, id, sessionHash, userID string) (ConsentRequest, error)
	// CreateGrant records an approval, or extends the user's active
	// approval of the client for the same restaurant or organizations (its
	// scopes become the union), and returns the grant's id.
	CreateGrant(ctx context.Context, g GrantRequest) (string, error)
	// Grant returns a grant and its client's status.
	Grant(ctx context.Context, id string) (Grant, string, error)
	Grants(ctx context.Context, clientID, userID string) ([]Grant, error)
	// RevokeGrant ends a grant and every token of it, once, and records its
	// authorization.revoked events; by is who (contracts.RevokedBy…).
	RevokeGrant(ctx context.Context, id, by string) (Grant, error)
	// RecordGrantUse keeps, per grant, the latest of its stored and given
	// last-use times; unknown grants are skipped.
	RecordGrantUse(ctx context.Context, uses map[string]time.Time) error
	// Coverage returns a grant and what it covers now.
	Coverage(ctx context.Context, grantID string) (GrantCoverage, error)
	// Revocations lists a grant's revoked token families and token ids.
	Revocations(ctx context.Context, grantID string) (families, ids []string, err error)
	// Reach is what a user owns or administers.
	Reach(ctx context.Context, userID string) (Reach, error)
	// CoverNewRestaurants extends an active organization grant to the
	// restaurants the organization gained since approval (an owner's
	// approval again) and answers how many; ErrNotFound when the grant does
	// not name the organization, ErrGrantNotActive when it has ended.
	CoverNewRestaurants(ctx context.Context, grantID, organizationID string) (int, error)
	// GrantsTouching lists, newest first and at most limit, the ids of the
	// grants whose approval named one of the reach's restaurants or
	// organizations: the candidates Reach.Sees decides on.
	GrantsTouching(ctx context.Context, r Reach, limit int) ([]string, error)
	// GrantChanges lists, up to limit, the changes written after
	// since-overlap (none when since is zero), with the database's clock
	// now; Reset when there are more.
	GrantChanges(ctx context.Context, since time.Time, overlap time.Duration, limit int) (GrantChanges, error)
}

// GrantChanges are the changes that can narrow what grants allow.
type GrantChanges = contracts.GrantChanges

// NewClient is an operator's registration of a partner client, and
// ClientUpdate a change to it (nil fields stay): the admin API's bodies.
type (
	NewClient    = contracts.PartnerClientRegistration
	ClientUpdate = contracts.PartnerClientUpdate
)

// ConsentRequest is the authorization request a consent page showed, and
// the choices it offered.
type ConsentRequest struct {
	ID              string
	SessionHash     string
	UserID          string
	ClientID        string
	Params          map[string]string
	Scopes          []string
	RestaurantIDs   []string
	OrganizationIDs []string
	ExpiresAt       time.Time
}

// GrantCoverage is a grant and what it covers now. A restaurant that left
// an organization after approval is no longer covered through it: an
// authorization only ever shrinks after approval.
type GrantCoverage struct {
	Grant        Grant
	ClientStatus string
	// Restaurants are the covered (organization, restaurant) associations
	// by restaurant name and id; OrganizationID is empty for a
	// restaurant-boundary grant.
	Restaurants []CoveredRestaurant
	// Organizations are an organization-boundary grant's organizations by
	// name and id.
	Organizations []CoveredOrganization
}

// CoveredRestaurant is one association a grant covers.
type CoveredRestaurant struct {
	OrganizationID string
	Restaurant
}

// CoveredOrganization is an organization a grant names, with the
// restaurants it has gained since approval.
type CoveredOrganization struct {
	OrganizationID string
	Name           string
	Role           string
	// AdditionalRestaurantIDs are current restaurants the grant does not
	// cover, AdditionalRestaurantNames their names (in name order).
	AdditionalRestaurantIDs   []string
	AdditionalRestaurantNames []string
}

// Organization is a management organization.
type Organization struct {
	ID             string
	Name           string
	RegisteredName string
	BusinessID     string
}

// Restaurant is a restaurant with its settings and organizations.
type Restaurant struct {
	ID              string
	Name            string
	TimeZone        string
	DayStartHour    int
	Currency        string
	Country         string
	RegisteredName  string
	BusinessID      string
	OrganizationIDs []string
}

// Membership is a user's role in one restaurant or one organization.
type Membership struct {
	ID             int64
	UserID         string
	RestaurantID   string
	OrganizationID string
	Role           string
}
