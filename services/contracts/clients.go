package contracts

// PartnerClientRegistration is the body of identity's admin
// `POST /admin/v1/clients`: a partner client as an operator registers it.
type PartnerClientRegistration struct {
	ClientID      string   `json:"clientId"`
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	RedirectURIs  []string `json:"redirectUris"`
	AllowedScopes []string `json:"allowedScopes"`
	Status        string   `json:"status"`
}

// PartnerClientUpdate is the body of identity's admin
// `PATCH /admin/v1/clients/{clientId}`; a null or absent field stays as it is.
type PartnerClientUpdate struct {
	Name          *string  `json:"name"`
	RedirectURIs  []string `json:"redirectUris"`
	AllowedScopes []string `json:"allowedScopes"`
	Status        *string  `json:"status"`
}
