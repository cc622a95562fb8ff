package api

import (
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/url"

	"github.com/ory/fosite"

	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/identity/internal/domain"
	"partnerapi.dev/services/identity/internal/oauth"
)

type oauthEndpoints struct {
	srv  *oauth.Server
	repo domain.Repository
}

func (o oauthEndpoints) token(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if !formBody(r) {
		o.srv.WriteAccessError(ctx, w, fosite.NewAccessRequest(oauth.NewSession()), fosite.ErrInvalidRequest.WithHint(notForm))
		return
	}
	ar, err := o.srv.NewAccessRequest(ctx, r, oauth.NewSession())
	if err == nil {
		var resp fosite.AccessResponder
		if resp, err = o.srv.NewAccessResponse(ctx, ar); err == nil {
			o.srv.WriteAccessResponse(ctx, w, ar, resp)
			return
		}
	}
	challengeClient(w, err)
	o.srv.WriteAccessError(ctx, w, ar, err)
}

// notForm answers an OAuth request whose body is not a form.
const notForm = "Send the request as a form: Content-Type: application/x-www-form-urlencoded (RFC 6749 section 4.1.3, RFC 7009 section 2.1), not JSON."

// formBody tells whether a POST is a form, as every OAuth endpoint takes
// its parameters; anything else would be answered with the library's words
// ("The POST body can not be empty").
func formBody(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/x-www-form-urlencoded"
}

// challengeClient adds the challenge RFC 6749 section 5.2 requires with
// the 401 of invalid_client.
func challengeClient(w http.ResponseWriter, err error) {
	if errors.Is(err, fosite.ErrInvalidClient) {
		w.Header().Set("WWW-Authenticate", `Basic realm="oauth2"`)
	}
}

func (o oauthEndpoints) revoke(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if !formBody(r) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": notForm})
		return
	}
	err := o.srv.NewRevocationRequest(ctx, r)
	if err == nil {
		// fosite has authenticated the client; the token itself is also
		// recorded, in case it is an access token a refresh superseded.
		// A refresh token's revocation ends its authorization.
		token, client := r.PostForm.Get("token"), requestClientID(r)
		if err = o.srv.RevokeAccessTokenID(ctx, token, client); err == nil {
			err = o.srv.RevokeGrantOfRefreshToken(ctx, token, client)
		}
		if err != nil {
			err = fosite.ErrTemporarilyUnavailable.WithWrap(err)
		}
	}
	challengeClient(w, err)
	o.srv.WriteRevocationResponse(ctx, w, err)
}

// requestClientID is the client id a token or revocation request
// authenticates as (HTTP Basic, or client_id in the form).
func requestClientID(r *http.Request) string {
	if id, _, ok := r.BasicAuth(); ok {
		if u, err := url.QueryUnescape(id); err == nil {
			return u
		}
		return id
	}
	return r.PostForm.Get("client_id")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// introspect answers only confidential clients authenticating with HTTP
// Basic; a token under a revoked or expired grant is inactive.
func (o oauthEndpoints) introspect(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id, _, ok := r.BasicAuth()
	if ok {
		c, err := o.repo.Client(ctx, id)
		ok = err == nil && c.Type == domain.ClientConfidential && c.Status == domain.ClientApproved
	}
	if !ok {
		w.Header().Set("WWW-Authenticate", `Basic realm="introspection"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client", "error_description": "Introspection is for confidential partner clients authenticating with HTTP Basic."})
		return
	}
	ir, err := o.srv.NewIntrospectionRequest(ctx, r, oauth.NewSession())
	if err != nil {
		o.srv.WriteIntrospectionError(ctx, w, err)
		return
	}
	if s, ok := ir.GetAccessRequester().GetSession().(*oauth.Session); ok {
		if g, _, err := o.repo.Grant(ctx, s.GrantID); err != nil || g.Status != "active" {
			writeJSON(w, http.StatusOK, map[string]bool{"active": false})
			return
		}
	}
	o.srv.WriteIntrospectionResponse(ctx, w, ir)
}

func (o oauthEndpoints) jwks(w http.ResponseWriter, r *http.Request) {
	set, err := o.srv.Keys.JWKS(r.Context())
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "service_unavailable"})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=60")
	_ = json.NewEncoder(w).Encode(set)
}

func (o oauthEndpoints) metadata(w http.ResponseWriter, _ *http.Request) {
	iss := o.srv.Settings.Issuer
	var scopes []string
	for _, s := range contracts.Scopes {
		scopes = append(scopes, s.Name)
	}
	w.Header().Set("Cache-Control", "public, max-age=300")
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                         iss,
		"authorization_endpoint":                         iss + "/oauth2/authorize",
		"token_endpoint":                                 iss + "/oauth2/token",
		"jwks_uri":                                       iss + "/oauth2/jwks",
		"revocation_endpoint":                            iss + "/oauth2/revoke",
		"introspection_endpoint":                         iss + "/oauth2/introspect",
		"response_types_supported":                       []string{"code"},
		"response_modes_supported":                       []string{"query"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          []string{"client_secret_basic", "client_secret_post", "none"},
		"introspection_endpoint_auth_methods_supported":  []string{"client_secret_basic"},
		"revocation_endpoint_auth_methods_supported":     []string{"client_secret_basic", "client_secret_post", "none"},
		"scopes_supported":                               scopes,
		"access_token_signing_alg_values_supported":      []string{oauth.Alg},
		"authorization_response_iss_parameter_supported": true,
	})
}
