package oauth

import (
	"context"

	"github.com/ory/fosite"
	"github.com/ory/fosite/handler/oauth2"

	"partnerapi.dev/services/identity/internal/store"
)

// revokedRefresh runs before fosite's refresh grant, which answers every
// refresh token that no longer works as "already used". A token revoked at
// /oauth2/revoke, or with its family, is told apart: the client must send
// the owner through authorization again, and a retry would not help.
type revokedRefresh struct {
	store    *store.Store
	strategy oauth2.RefreshTokenStrategy
}

func (h *revokedRefresh) CanSkipClientAuth(context.Context, fosite.AccessRequester) bool {
	return false
}

func (h *revokedRefresh) CanHandleTokenEndpointRequest(_ context.Context, r fosite.AccessRequester) bool {
	return r.GetGrantTypes().ExactOne("refresh_token")
}

func (h *revokedRefresh) HandleTokenEndpointRequest(ctx context.Context, r fosite.AccessRequester) error {
	sig := h.strategy.RefreshTokenSignature(ctx, r.GetRequestForm().Get("refresh_token"))
	clientID, revoked, err := h.store.RefreshTokenRevoked(ctx, sig)
	if err != nil {
		return fosite.ErrServerError.WithWrap(err)
	}
	if revoked && clientID == r.GetClient().GetID() {
		return fosite.ErrInvalidGrant.WithHint("The refresh token was revoked, with every token of its authorization: at the revocation endpoint, or because a code or refresh token of it was used twice. Send the owner through authorization again.")
	}
	return nil
}

func (h *revokedRefresh) PopulateTokenEndpointResponse(context.Context, fosite.AccessRequester, fosite.AccessResponder) error {
	return nil
}

// otherGrants answers the grant types this server does not offer, which
// fosite, finding no handler, would answer invalid_request.
type otherGrants struct{}

func (otherGrants) CanSkipClientAuth(context.Context, fosite.AccessRequester) bool { return false }

func (otherGrants) CanHandleTokenEndpointRequest(_ context.Context, r fosite.AccessRequester) bool {
	g := r.GetGrantTypes()
	return !g.ExactOne("authorization_code") && !g.ExactOne("refresh_token")
}

func (otherGrants) HandleTokenEndpointRequest(_ context.Context, r fosite.AccessRequester) error {
	if r.GetGrantTypes().ExactOne("client_credentials") {
		return fosite.ErrUnauthorizedClient.WithHint("Partner clients act for a restaurant owner who approved them: use authorization_code with PKCE, then refresh_token.")
	}
	return fosite.ErrUnsupportedGrantType.WithHint("The grant types are authorization_code (with PKCE S256) and refresh_token.")
}

func (otherGrants) PopulateTokenEndpointResponse(context.Context, fosite.AccessRequester, fosite.AccessResponder) error {
	return nil
}
