// Package oauth is the OAuth 2.1 authorization server core: fosite
// configured for authorization code with PKCE S256 and rotating refresh
// tokens, RFC 9068 JWT access tokens signed with rotating ES256 keys, and a
// guard that ties every token to a live grant.
package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"
	"github.com/ory/fosite"
	"github.com/ory/fosite/compose"
	"github.com/ory/fosite/handler/oauth2"
	"github.com/ory/fosite/token/hmac"

	"partnerapi.dev/services/identity/internal/domain"
	"partnerapi.dev/services/identity/internal/store"
)

// Settings configures the provider.
type Settings struct {
	Issuer          string
	Audience        string
	AccessTokenTTL  time.Duration
	RefreshTokenTTL time.Duration
	// Secret seeds the HMAC of codes and refresh tokens (32 bytes or more).
	Secret []byte
}

// Server is the assembled authorization server.
type Server struct {
	fosite.OAuth2Provider
	Keys     *Keys
	Settings Settings
	// Store is the concrete store, not domain.Repository: it is fosite's
	// storage adapter, implementing fosite's client, code, PKCE, token and
	// transaction interfaces in SQL, which belong to storage and not to the
	// domain's words.
	Store    *store.Store
	strategy *Strategy
}

// New assembles fosite on the store.
func New(st *store.Store, keys *Keys, s Settings) *Server {
	secret := sha256.Sum256(append([]byte("identity.fosite.global-secret."), s.Secret...))
	cfg := &fosite.Config{
		AccessTokenLifespan:            s.AccessTokenTTL,
		RefreshTokenLifespan:           s.RefreshTokenTTL,
		AuthorizeCodeLifespan:          10 * time.Minute,
		GlobalSecret:                   secret[:],
		EnforcePKCE:                    true,
		EnforcePKCEForPublicClients:    true,
		EnablePKCEPlainChallengeMethod: false,
		RefreshTokenScopes:             []string{},
		ScopeStrategy:                  fosite.ExactScopeStrategy,
		TokenURL:                       s.Issuer + "/oauth2/token",
		AccessTokenIssuer:              s.Issuer,
		RedirectSecureChecker:          secureRedirect,
		ClientSecretsHasher:            newSecretHasher(store.ClientSecretCost),
	}
	st.NewSession = func() any { return NewSession() }
	strategy := &Strategy{
		HMACSHAStrategy: oauth2.NewHMACSHAStrategy(&hmac.HMACStrategy{Config: cfg}, cfg),
		keys:            keys,
		settings:        s,
	}
	guard := func(fosite.Configurator, any, any) any { return &grantGuard{store: st} }
	revoked := func(fosite.Configurator, any, any) any { return &revokedRefresh{store: st, strategy: strategy} }
	others := func(fosite.Configurator, any, any) any { return otherGrants{} }
	p := compose.Compose(cfg, st, strategy,
		compose.OAuth2AuthorizeExplicitFactory,
		revoked,
		compose.OAuth2RefreshTokenGrantFactory,
		compose.OAuth2PKCEFactory,
		compose.OAuth2TokenIntrospectionFactory,
		compose.OAuth2TokenRevocationFactory,
		guard,
		others,
	)
	return &Server{OAuth2Provider: p, Keys: keys, Settings: s, Store: st, strategy: strategy}
}

// NewAccessResponse issues the tokens of a validated token request. An
// authorization code that a concurrent exchange used first (found when the
// code is read again, or when it is marked used) is a reuse: it is refused,
// and what the code issued is revoked, as fosite does when it finds the code
// used before the exchange begins.
func (s *Server) NewAccessResponse(ctx context.Context, ar fosite.AccessRequester) (fosite.AccessResponder, error) {
	resp, err := s.OAuth2Provider.NewAccessResponse(ctx, ar)
	if !errors.Is(err, store.ErrCodeUsed) && !errors.Is(err, fosite.ErrInvalidatedAuthorizeCode) {
		return resp, err
	}
	refused := fosite.ErrInvalidGrant.WithHint("The authorization code has already been used.")
	if err := errors.Join(s.Store.RevokeAccessToken(ctx, ar.GetID()), s.Store.RevokeRefreshToken(ctx, ar.GetID())); err != nil {
		return nil, refused.WithWrap(err).WithDebug(err.Error())
	}
	return nil, refused
}

func secureRedirect(_ context.Context, u *url.URL) bool {
	if u.Scheme == "https" {
		return true
	}
	h := u.Hostname()
	return u.Scheme == "http" && (h == "127.0.0.1" || h == "::1" || h == "localhost")
}

// Strategy issues opaque HMAC codes and refresh tokens and JWT access tokens.
type Strategy struct {
	*oauth2.HMACSHAStrategy
	keys     *Keys
	settings Settings
}

// AccessClaims are the RFC 9068 claims of an access token.
type AccessClaims struct {
	Issuer   string `json:"iss"`
	Subject  string `json:"sub"`
	Audience string `json:"aud"`
	ClientID string `json:"client_id"`
	Scope    string `json:"scope"`
	JTI      string `json:"jti"`
	IssuedAt int64  `json:"iat"`
	Expiry   int64  `json:"exp"`
	GrantID  string `json:"gid"`
	// Family is the token family (fosite's request id, shared by the code,
	// its refresh chain and their access tokens), so the gateway can refuse
	// every access token of a revoked family.
	Family string `json:"fid"`
}

// AccessTokenSignature is the JWT's signature part.
func (s *Strategy) AccessTokenSignature(_ context.Context, token string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return ""
	}
	return parts[2]
}

// GenerateAccessToken signs an RFC 9068 JWT with the active key.
func (s *Strategy) GenerateAccessToken(ctx context.Context, r fosite.Requester) (string, string, error) {
	sess, ok := r.GetSession().(*Session)
	if !ok || sess.GrantID == "" {
		return "", "", errors.New("access token without grant")
	}
	key, err := s.keys.signer(ctx)
	if err != nil {
		return "", "", err
	}
	now := time.Now().UTC()
	exp := sess.GetExpiresAt(fosite.AccessToken)
	if exp.IsZero() {
		exp = now.Add(s.settings.AccessTokenTTL)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: key.private, KeyID: key.kid}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		return "", "", err
	}
	claims := AccessClaims{
		Issuer: s.settings.Issuer, Subject: sess.Subject, Audience: s.settings.Audience, ClientID: r.GetClient().GetID(),
		Scope: strings.Join(r.GetGrantedScopes(), " "), JTI: uuid.NewString(), IssuedAt: now.Unix(), Expiry: exp.Unix(), GrantID: sess.GrantID,
		Family: r.GetID(),
	}
	token, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		return "", "", err
	}
	return token, s.AccessTokenSignature(ctx, token), nil
}

// ValidateAccessToken checks signature, type and expiry.
func (s *Strategy) ValidateAccessToken(ctx context.Context, _ fosite.Requester, token string) error {
	_, err := s.Verify(ctx, token)
	return err
}

// Verify parses and checks an access token issued here.
func (s *Strategy) Verify(ctx context.Context, token string) (AccessClaims, error) {
	jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil || len(jws.Signatures) != 1 {
		return AccessClaims{}, fosite.ErrTokenSignatureMismatch
	}
	h := jws.Signatures[0].Header
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); typ != "at+jwt" {
		return AccessClaims{}, fosite.ErrTokenSignatureMismatch
	}
	key, err := s.keys.verifier(ctx, h.KeyID)
	if err != nil {
		return AccessClaims{}, fosite.ErrTokenSignatureMismatch
	}
	payload, err := jws.Verify(key)
	if err != nil {
		return AccessClaims{}, fosite.ErrTokenSignatureMismatch
	}
	var c AccessClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		return AccessClaims{}, fosite.ErrTokenSignatureMismatch
	}
	if time.Now().Unix() >= c.Expiry {
		return c, fosite.ErrTokenExpired
	}
	return c, nil
}

// RevokeAccessTokenID records the jti of token as revoked when it is an
// unexpired access token issued here to clientID. An access token that a
// refresh superseded is no longer active in fosite's storage, so fosite's
// own revocation does not reach it.
func (s *Server) RevokeAccessTokenID(ctx context.Context, token, clientID string) error {
	c, err := (&Strategy{keys: s.Keys, settings: s.Settings}).Verify(ctx, token)
	if err != nil || c.ClientID != clientID || c.JTI == "" || c.GrantID == "" {
		return nil //nolint:nilerr // not a valid access token of this client: nothing of it to revoke (RFC 7009)
	}
	return s.Store.RevokeAccessTokenID(ctx, c.GrantID, c.JTI, time.Unix(c.Expiry, 0))
}

// RevokeGrantOfRefreshToken revokes the authorization (grant) of token
// when it is a refresh token issued here to clientID. RFC 7009 lets the
// revocation of a refresh token end its grant; a partner revokes it when it
// stops acting for the owner (an uninstall), so every token, the event feed
// and the webhooks of that authorization stop too.
func (s *Server) RevokeGrantOfRefreshToken(ctx context.Context, token, clientID string) error {
	return s.Store.RevokeGrantOfRefreshToken(ctx, s.strategy.RefreshTokenSignature(ctx, token), clientID)
}

// pkceChallenge is RFC 7636's code_challenge: 43 to 128 unreserved characters.
var pkceChallenge = regexp.MustCompile(`^[A-Za-z0-9._~-]{43,128}$`)

// CheckPKCE refuses an authorization request whose PKCE parameters could
// never be satisfied, before the owner signs in: fosite itself looks at
// them only when it issues the code.
func CheckPKCE(form url.Values) error {
	challenge, method := form.Get("code_challenge"), form.Get("code_challenge_method")
	switch {
	case challenge == "":
		return fosite.ErrInvalidRequest.WithHint("Clients must include a code_challenge (PKCE S256).")
	case method != "S256":
		return fosite.ErrInvalidRequest.WithHint("The code_challenge_method must be S256.")
	case !pkceChallenge.MatchString(challenge):
		return fosite.ErrInvalidRequest.WithHint("The code_challenge must be 43 to 128 characters of A-Z, a-z, 0-9, '-', '.', '_' and '~'.")
	}
	return nil
}

// grantGuard runs after fosite's own checks at the token endpoint: the grant
// behind a code or refresh token must still be active, belong to the
// client, and a refresh may not ask for more than the owner approved.
type grantGuard struct{ store *store.Store }

func (g *grantGuard) CanSkipClientAuth(context.Context, fosite.AccessRequester) bool { return false }

func (g *grantGuard) CanHandleTokenEndpointRequest(_ context.Context, r fosite.AccessRequester) bool {
	return r.GetGrantTypes().ExactOne("authorization_code") || r.GetGrantTypes().ExactOne("refresh_token")
}

func (g *grantGuard) HandleTokenEndpointRequest(ctx context.Context, r fosite.AccessRequester) error {
	if !g.CanHandleTokenEndpointRequest(ctx, r) {
		return fosite.ErrUnknownRequest
	}
	sess, ok := r.GetSession().(*Session)
	if !ok || sess.GrantID == "" {
		return fosite.ErrInvalidGrant.WithHint("The code or token is not tied to an approval.")
	}
	grant, clientStatus, err := g.store.Grant(ctx, sess.GrantID)
	if errors.Is(err, domain.ErrNotFound) {
		return fosite.ErrInvalidGrant.WithHint("The approval behind this code or token no longer exists.")
	}
	if err != nil {
		return fosite.ErrServerError.WithWrap(err)
	}
	if clientStatus != domain.ClientApproved {
		return fosite.ErrUnauthorizedClient.WithHint("The partner client is suspended.")
	}
	if grant.ClientID != r.GetClient().GetID() {
		return fosite.ErrInvalidGrant.WithHint("The code or token was issued to another client.")
	}
	switch grant.Status {
	case "revoked":
		return fosite.ErrInvalidGrant.WithHint("The owner revoked this authorization; ask the owner to approve again.")
	case "expired":
		return fosite.ErrInvalidGrant.WithHint("This authorization has expired; ask the owner to approve again.")
	}
	if r.GetGrantTypes().ExactOne("refresh_token") {
		for _, s := range strings.Fields(r.GetRequestForm().Get("scope")) {
			if !slices.Contains(grant.Scopes, s) {
				return fosite.ErrInvalidScope.WithHintf("Scope '%s' was not approved by the owner; a refresh cannot add scopes.", s)
			}
		}
	}
	// An access token never outlives the approval.
	if exp := sess.GetExpiresAt(fosite.AccessToken); !exp.IsZero() && exp.After(grant.ExpiresAt) {
		sess.SetExpiresAt(fosite.AccessToken, grant.ExpiresAt)
	}
	return nil
}

func (g *grantGuard) PopulateTokenEndpointResponse(context.Context, fosite.AccessRequester, fosite.AccessResponder) error {
	return nil
}
