package oauth

import (
	"context"
	"errors"
	"net/http"

	"github.com/ory/fosite"
)

// NewAuthorizeRequest is fosite's, with PKCE S256 required at once and
// state optional. fosite refuses a state under 8 characters, or none; OAuth
// 2.1 lets a client that proves possession with PKCE omit it, and its length
// is the client's concern. fosite checks state after everything else, so the
// request it returns with that error is complete.
func (s *Server) NewAuthorizeRequest(ctx context.Context, r *http.Request) (fosite.AuthorizeRequester, error) {
	ar, err := s.OAuth2Provider.NewAuthorizeRequest(ctx, r)
	if errors.Is(err, fosite.ErrInvalidState) {
		err = nil
	}
	if err == nil {
		err = CheckPKCE(ar.GetRequestForm())
	}
	return ar, err
}

// WriteAuthorizeResponse redirects with the code as fosite does, naming the
// issuer (RFC 9207, so a client talking to several servers cannot be mixed
// up) and sending state back only when the client sent one.
func (s *Server) WriteAuthorizeResponse(ctx context.Context, w http.ResponseWriter, ar fosite.AuthorizeRequester, resp fosite.AuthorizeResponder) {
	params := resp.GetParameters()
	if ar.GetState() == "" {
		params.Del("state")
	}
	params.Set("iss", s.Settings.Issuer)
	s.OAuth2Provider.WriteAuthorizeResponse(ctx, w, ar, resp)
}

// WriteAuthorizeError answers on the redirect URI, like
// WriteAuthorizeResponse, with the issuer and without an empty state. A
// request whose redirect URI cannot be trusted gets fosite's answer.
func (s *Server) WriteAuthorizeError(ctx context.Context, w http.ResponseWriter, ar fosite.AuthorizeRequester, err error) {
	if ar == nil || !ar.IsRedirectURIValid() || !queryResponse(ar) {
		s.OAuth2Provider.WriteAuthorizeError(ctx, w, ar, err)
		return
	}
	to := *ar.GetRedirectURI()
	to.Fragment = ""
	q := to.Query()
	for k, v := range fosite.ErrorToRFC6749Error(err).ToValues() {
		q[k] = v
	}
	if st := ar.GetState(); st != "" {
		q.Set("state", st)
	}
	q.Set("iss", s.Settings.Issuer)
	to.RawQuery = q.Encode()
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	w.Header().Set("Location", to.String())
	w.WriteHeader(http.StatusSeeOther)
}

// queryResponse tells whether the answer goes in the redirect URI's query,
// the only response mode the metadata advertises.
func queryResponse(ar fosite.AuthorizeRequester) bool {
	m := ar.GetResponseMode()
	return m == fosite.ResponseModeDefault || m == fosite.ResponseModeQuery
}
