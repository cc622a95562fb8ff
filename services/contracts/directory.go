package contracts

// DirectoryImportPath is identity's admin route that upserts a Directory.
const DirectoryImportPath = "/admin/v1/directory/import"

// Directory is the body of identity's directory import: users,
// organizations, restaurants, memberships and partner clients, each upserted
// by id. The seed writes it; identity decodes it strictly and validates it.
type Directory struct {
	Users          []DirectoryUser          `json:"users"`
	Organizations  []DirectoryOrganization  `json:"organizations"`
	Restaurants    []DirectoryRestaurant    `json:"restaurants"`
	Memberships    []DirectoryMembership    `json:"memberships"`
	PartnerClients []DirectoryPartnerClient `json:"partnerClients"`
}

// DirectoryUser is a person who signs in to approve partners; identity
// hashes the password before storing it.
type DirectoryUser struct {
	UserID   string `json:"userId"`
	Email    string `json:"email"`
	Name     string `json:"name"`
	Password string `json:"password"`
}

// DirectoryOrganization is a management organization.
type DirectoryOrganization struct {
	OrganizationID string `json:"organizationId"`
	Name           string `json:"name"`
	RegisteredName string `json:"registeredName"`
	BusinessID     string `json:"businessId"`
}

// DirectoryRestaurant is a restaurant with the settings every service
// computes dates and money with, and the organizations it belongs to (the
// list replaces the current associations). DayStartHour is a pointer so
// that a missing hour is refused rather than read as midnight.
type DirectoryRestaurant struct {
	RestaurantID    string   `json:"restaurantId"`
	Name            string   `json:"name"`
	TimeZone        string   `json:"timeZone"`
	DayStartHour    *int     `json:"dayStartHour"`
	Currency        string   `json:"currency"`
	Country         string   `json:"country"`
	RegisteredName  string   `json:"registeredName"`
	BusinessID      string   `json:"businessId"`
	OrganizationIDs []string `json:"organizationIds"`
}

// DirectoryMembership gives a user a role in exactly one restaurant or one
// organization.
type DirectoryMembership struct {
	UserID         string  `json:"userId"`
	RestaurantID   *string `json:"restaurantId"`
	OrganizationID *string `json:"organizationId"`
	Role           string  `json:"role"`
}

// DirectoryPartnerClient registers a partner client; a confidential client
// carries its secret, a public one null.
type DirectoryPartnerClient struct {
	ClientID      string   `json:"clientId"`
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	Secret        *string  `json:"secret"`
	RedirectURIs  []string `json:"redirectUris"`
	AllowedScopes []string `json:"allowedScopes"`
	Status        string   `json:"status"`
}
