package contracts

import "time"

// GrantPath is where identity answers a grant lookup; {grantId} is the
// grant's id.
const GrantPath = "/internal/v1/grants/{grantId}"

// Grant is identity's answer to the gateway's grant lookup: an owner's
// approval of a partner client, with what it covers now.
type Grant struct {
	GrantID      string `json:"grantId"`
	ClientID     string `json:"clientId"`
	ClientStatus string `json:"clientStatus"`
	UserID       string `json:"userId"`
	// Status is active, revoked or expired.
	Status    string    `json:"status"`
	ExpiresAt time.Time `json:"expiresAt"`
	Scopes    []string  `json:"scopes"`
	// Boundary is restaurant or organization.
	Boundary      string              `json:"boundary"`
	Restaurants   []GrantRestaurant   `json:"restaurants"`
	Organizations []GrantOrganization `json:"organizations"`
	// RevokedTokenFamilies and RevokedTokenIDs name the grant's revoked
	// access tokens (their fid and jti claims) that may not have expired yet.
	RevokedTokenFamilies []string `json:"revokedTokenFamilies"`
	RevokedTokenIDs      []string `json:"revokedTokenIds"`
}

// GrantRestaurant is one restaurant a grant covers, with its settings.
type GrantRestaurant struct {
	RestaurantID    string   `json:"restaurantId"`
	TimeZone        string   `json:"timeZone"`
	DayStartHour    int      `json:"dayStartHour"`
	Currency        string   `json:"currency"`
	Country         string   `json:"country"`
	OrganizationIDs []string `json:"organizationIds"`
}

// GrantOrganization lists the restaurants a grant covers through one
// organization (organization-boundary grants).
type GrantOrganization struct {
	OrganizationID string   `json:"organizationId"`
	RestaurantIDs  []string `json:"restaurantIds"`
}

// GrantUsePath takes the gateway's record of use (POST GrantUses): when each
// grant last authorized a partner request, to the minute. Identity keeps the
// latest time it has been sent per grant, so a resend or an older batch
// from another replica changes nothing.
const GrantUsePath = "/internal/v1/grants/last-used"

// MaxGrantUses bounds one GrantUses call.
const MaxGrantUses = 10_000

// GrantUses is one batch of the gateway's record of use.
type GrantUses struct {
	Uses []GrantUse `json:"uses"`
}

// GrantUse is the minute in which a grant last authorized a request.
type GrantUse struct {
	GrantID string    `json:"grantId"`
	UsedAt  time.Time `json:"usedAt"`
}

// GrantChangesPath is where identity lists the recent changes that can
// narrow what grants allow (GET, query since=<GrantChanges.Now of the
// previous answer>, none on the first call): what the gateway and the
// events service follow to drop cached grants at once.
const GrantChangesPath = "/internal/v1/grant-changes"

// GrantChanges is identity's answer at GrantChangesPath. Now is identity's
// clock when it looked, to send back as since. Changes repeat those of
// earlier answers near since (a change committed late is not missed), so a
// follower skips sequence numbers it has seen. Reset means more changed
// than one answer lists: drop every cached grant.
type GrantChanges struct {
	Now     time.Time     `json:"now"`
	Changes []GrantChange `json:"changes"`
	Reset   bool          `json:"reset,omitempty"`
}

// GrantChangesOverlap is how far before since identity lists changes
// again: a change whose transaction took longer than this between writing
// it and committing could be missed (and then holds within the cache
// lifetime).
const GrantChangesOverlap = 5 * time.Second

// GrantChange is one grant that changed, or, with ClientID, every grant of
// a client.
type GrantChange struct {
	Seq      int64  `json:"seq"`
	GrantID  string `json:"grantId,omitempty"`
	ClientID string `json:"clientId,omitempty"`
}
