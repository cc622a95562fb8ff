package api

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ory/fosite"

	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/identity/internal/domain"
	"partnerapi.dev/services/identity/internal/oauth"
	"partnerapi.dev/services/identity/internal/password"
	"partnerapi.dev/services/identity/internal/web"
)

// Sign-in throttling: this many failures per email within the window refuse
// further attempts until the window has passed.
const (
	MaxSignInFailures = 5
	SignInWindow      = 15 * time.Minute
	sessionCookie     = "identity_session"
	sessionTTL        = 30 * time.Minute
	// consentTTL is how long a consent page can be answered.
	consentTTL = 10 * time.Minute
)

// browserSession is the signed cookie of the sign-in and consent pages.
type browserSession struct {
	SID     string `json:"sid"`
	UserID  string `json:"uid,omitempty"`
	Expires int64  `json:"exp"`
}

// Pages serves GET/POST /oauth2/authorize: sign-in, consent, and the
// redirect back to the partner.
type Pages struct {
	srv      *oauth.Server
	repo     domain.Repository
	key      []byte
	secure   bool
	grantTTL time.Duration
	// activity asks the events service for the connected-apps page (nil:
	// not configured).
	activity ActivitySource
}

func newPages(srv *oauth.Server, repo domain.Repository, secret []byte, secure bool, grantTTL time.Duration) *Pages {
	k := sha256.Sum256(append([]byte("identity.browser-session."), secret...))
	return &Pages{srv: srv, repo: repo, key: k[:], secure: secure, grantTTL: grantTTL}
}

func (p *Pages) sign(b []byte) string {
	m := hmac.New(sha256.New, p.key)
	m.Write(b)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (p *Pages) readSession(r *http.Request) (browserSession, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return browserSession{}, false
	}
	body, sig, ok := strings.Cut(c.Value, ".")
	if !ok {
		return browserSession{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || !hmac.Equal([]byte(sig), []byte(p.sign(raw))) {
		return browserSession{}, false
	}
	var s browserSession
	if json.Unmarshal(raw, &s) != nil || time.Now().Unix() > s.Expires || s.SID == "" {
		return browserSession{}, false
	}
	return s, true
}

func (p *Pages) writeSession(w http.ResponseWriter, s browserSession) {
	s.Expires = time.Now().Add(sessionTTL).Unix()
	raw, _ := json.Marshal(s)
	http.SetCookie(w, &http.Cookie{ //nolint:gosec // Secure is set whenever the public base URL is https
		Name: sessionCookie, Value: base64.RawURLEncoding.EncodeToString(raw) + "." + p.sign(raw),
		Path: "/", HttpOnly: true, Secure: p.secure, SameSite: http.SameSiteLaxMode, MaxAge: int(sessionTTL.Seconds()),
	})
	// A cookie of the old path (/oauth2/) would be sent first and shadow
	// this one until it expired, so it is removed.
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Path: "/oauth2/", HttpOnly: true, Secure: p.secure, SameSite: http.SameSiteLaxMode, MaxAge: -1}) //nolint:gosec // as above
}

// csrf is bound to the session id, so a token from another session fails.
func (p *Pages) csrf(s browserSession) string { return p.sign([]byte("csrf:" + s.SID)) }

func newSID() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// authorizeParams are carried in the form action, so the POSTs of the pages
// are authorization requests too.
var authorizeParams = []string{"response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method"}

func actionURL(form url.Values) string {
	q := url.Values{}
	for _, k := range authorizeParams {
		if v := form.Get(k); v != "" {
			q.Set(k, v)
		}
	}
	return "/oauth2/authorize?" + q.Encode()
}

type scopeLine struct{ Name, Words string }

type pageData struct {
	Title, ClientName, Action, CSRF, Error, Email string
	// Next is where the account sign-in form goes back to.
	Next                string
	ConsentID           string
	UserName, UserEmail string
	Scopes              []scopeLine
	Restaurants         []domain.RestaurantOption
	Organizations       []domain.OrganizationOption
	CSS                 template.CSS
	// Apps and App are the connected-apps pages' content.
	Apps   []appView
	App    *appView
	Notice string
}

func (p *Pages) render(ctx context.Context, w http.ResponseWriter, status int, name string, d pageData) {
	d.CSS = web.CSS
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' *; frame-ancestors 'none'")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	if err := web.Templates.ExecuteTemplate(w, name, d); err != nil {
		slog.ErrorContext(ctx, "render page", "page", name, "error", err)
	}
}

func (p *Pages) fail(ctx context.Context, w http.ResponseWriter, status int, title, msg string) {
	p.render(ctx, w, status, "error", pageData{Title: title, Error: msg})
}

// ServeHTTP is /oauth2/authorize.
func (p *Pages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if err := r.ParseForm(); err != nil {
		p.fail(r.Context(), w, http.StatusBadRequest, "Invalid request", "The request could not be read.")
		return
	}
	if r.Method == http.MethodPost && r.PostForm.Get("action") == "consent" {
		p.decide(ctx, w, r)
		return
	}
	client, ar, ok := p.authorizeRequest(ctx, w, r)
	if !ok {
		return
	}
	sess, ok := p.readSession(r)
	if !ok {
		sess = browserSession{SID: newSID()}
	}
	d := pageData{Title: "Sign in", ClientName: client.Name, Action: actionURL(r.Form), CSRF: p.csrf(sess)}

	if r.Method == http.MethodPost {
		if !ok || !hmac.Equal([]byte(r.PostForm.Get("csrf_token")), []byte(p.csrf(sess))) {
			sess = browserSession{SID: newSID()}
			p.writeSession(w, sess)
			d.CSRF = p.csrf(sess)
			d.Error = "Your session expired. Please sign in again."
			p.render(r.Context(), w, http.StatusForbidden, "signin", d)
			return
		}
		if r.PostForm.Get("action") == "signin" {
			p.signIn(ctx, w, r, sess, d, d.Action)
			return
		}
	}
	p.writeSession(w, sess)
	if sess.UserID == "" {
		p.render(r.Context(), w, http.StatusOK, "signin", d)
		return
	}
	p.showConsent(ctx, w, ar, sess, client, d, "", http.StatusOK)
}

// authorizeRequest checks the client and redirect URI (an unknown,
// unapproved or suspended client, or a redirect URI that is not exactly
// registered, gets the error page, never a redirect), then parses the
// authorization request; anything else wrong is answered on the redirect.
func (p *Pages) authorizeRequest(ctx context.Context, w http.ResponseWriter, r *http.Request) (domain.PartnerClient, fosite.AuthorizeRequester, bool) {
	client, err := p.repo.Client(ctx, r.Form.Get("client_id"))
	if errors.Is(err, domain.ErrNotFound) {
		p.fail(ctx, w, http.StatusBadRequest, "Unknown partner application", "The partner application is not registered.")
		return client, nil, false
	}
	if err != nil {
		p.fail(ctx, w, http.StatusServiceUnavailable, "Try again later", "The service is temporarily unavailable.")
		return client, nil, false
	}
	if client.Status != domain.ClientApproved {
		p.fail(ctx, w, http.StatusBadRequest, "Partner application not available", "This partner application is not approved or has been suspended, so it cannot ask for access.")
		return client, nil, false
	}
	if ru := r.Form.Get("redirect_uri"); ru != "" && !slices.Contains(client.RedirectURIs, ru) {
		p.fail(ctx, w, http.StatusBadRequest, "Invalid redirect", "The redirect address does not match one registered for this partner application.")
		return client, nil, false
	}
	ar, err := p.srv.NewAuthorizeRequest(ctx, r)
	if err != nil && (ar == nil || !ar.IsRedirectURIValid()) {
		// No trusted address to send the error to: the owner reads it here.
		p.fail(ctx, w, http.StatusBadRequest, "Invalid request", fosite.ErrorToRFC6749Error(err).GetDescription())
		return client, nil, false
	}
	if err != nil {
		p.srv.WriteAuthorizeError(ctx, w, ar, err)
		return client, nil, false
	}
	return client, ar, true
}

// signIn checks the form's email and password and, when they are right,
// starts a signed-in session and sends the browser to next.
func (p *Pages) signIn(ctx context.Context, w http.ResponseWriter, r *http.Request, sess browserSession, d pageData, next string) {
	email := strings.TrimSpace(r.PostForm.Get("email"))
	pw := r.PostForm.Get("password")
	d.Email = email
	st := p.repo
	// The attempt counts as a failure from here until it succeeds, so
	// attempts made at the same time count each other.
	attempt, n, err := st.StartSignIn(ctx, email, SignInWindow)
	if err != nil {
		p.fail(ctx, w, http.StatusServiceUnavailable, "Try again later", "The service is temporarily unavailable.")
		return
	}
	if n > MaxSignInFailures {
		// Refused without a password check: the answer is the same
		// whether the account exists, and refusing costs no hash.
		_ = st.ForgetSignInAttempt(ctx, attempt)
		p.writeSession(w, sess)
		d.Error = "Too many failed sign-in attempts for this email. Wait 15 minutes and try again."
		p.render(ctx, w, http.StatusTooManyRequests, "signin", d)
		return
	}
	u, err := st.UserByEmail(ctx, email)
	good := false
	switch {
	case err == nil:
		good, _ = password.Verify(ctx, u.PasswordHash, pw)
	case errors.Is(err, domain.ErrNotFound):
		password.VerifyDummy(ctx, pw)
	default:
		p.fail(ctx, w, http.StatusServiceUnavailable, "Try again later", "The service is temporarily unavailable.")
		return
	}
	if !good {
		p.writeSession(w, sess)
		d.Error = "The email or password is not correct."
		p.render(ctx, w, http.StatusUnauthorized, "signin", d)
		return
	}
	_ = st.ClearSignInFailures(ctx, email)
	// A new session id on sign-in, so a planted cookie cannot be promoted.
	p.writeSession(w, browserSession{SID: newSID(), UserID: u.ID})
	http.Redirect(w, r, next, http.StatusSeeOther) //nolint:gosec // G710: next is this service's own path: the authorize action or an accountNext match
}

func (p *Pages) requestedScopes(ar fosite.AuthorizeRequester, client domain.PartnerClient) []string {
	requested := []string(ar.GetRequestedScopes())
	if len(requested) == 0 {
		requested = []string{contracts.ScopeRestaurantRead}
	}
	var out []string
	for _, s := range requested {
		if slices.Contains(client.AllowedScopes, s) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func (p *Pages) showConsent(ctx context.Context, w http.ResponseWriter, ar fosite.AuthorizeRequester, sess browserSession, client domain.PartnerClient, d pageData, msg string, status int) {
	u, err := p.repo.UserByID(ctx, sess.UserID)
	if err != nil {
		p.writeSession(w, browserSession{SID: newSID()})
		p.render(ctx, w, http.StatusOK, "signin", d)
		return
	}
	opts, err := p.repo.ConsentOptions(ctx, u.ID)
	if err != nil {
		p.fail(ctx, w, http.StatusServiceUnavailable, "Try again later", "The service is temporarily unavailable.")
		return
	}
	d.Title = "Approve " + client.Name
	d.CSRF = p.csrf(sess)
	d.UserName, d.UserEmail = u.Name, u.Email
	d.Restaurants, d.Organizations = opts.Restaurants, opts.Organizations
	d.Error = msg
	rec := domain.ConsentRequest{ID: newConsentID(), SessionHash: p.consentKey(sess), UserID: u.ID, ClientID: client.ClientID,
		Params: map[string]string{}, Scopes: p.requestedScopes(ar, client), RestaurantIDs: []string{}, OrganizationIDs: []string{},
		ExpiresAt: time.Now().Add(consentTTL)}
	for _, k := range authorizeParams {
		if v := ar.GetRequestForm().Get(k); v != "" {
			rec.Params[k] = v
		}
	}
	for _, r := range opts.Restaurants {
		rec.RestaurantIDs = append(rec.RestaurantIDs, r.ID)
	}
	for _, o := range opts.Organizations {
		rec.OrganizationIDs = append(rec.OrganizationIDs, o.ID)
	}
	if err := p.repo.SaveConsentRequest(ctx, rec); err != nil {
		slog.ErrorContext(ctx, "save consent request", "error", err)
		p.fail(ctx, w, http.StatusServiceUnavailable, "Try again later", "The service is temporarily unavailable.")
		return
	}
	// The form names only the recorded request: what it approves cannot be
	// changed by editing the form or its action.
	d.Action, d.ConsentID = "/oauth2/authorize", rec.ID
	for _, s := range rec.Scopes {
		d.Scopes = append(d.Scopes, scopeLine{Name: s, Words: domain.ScopeWords(s)})
	}
	p.render(ctx, w, status, "consent", d)
}

func newConsentID() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// consentKey binds a consent request to the browser session that saw it.
func (p *Pages) consentKey(s browserSession) string { return p.sign([]byte("consent:" + s.SID)) }

// decide answers a consent form: it takes the recorded request the page
// showed (once, in the same signed-in session) and approves or denies
// exactly that request.
func (p *Pages) decide(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	sess, ok := p.readSession(r)
	if !ok || sess.UserID == "" || !hmac.Equal([]byte(r.PostForm.Get("csrf_token")), []byte(p.csrf(sess))) {
		p.writeSession(w, browserSession{SID: newSID()})
		p.fail(ctx, w, http.StatusForbidden, "Session expired", "Your session expired. Start again from the partner's application.")
		return
	}
	rec, err := p.repo.TakeConsentRequest(ctx, r.PostForm.Get("consent_id"), p.consentKey(sess), sess.UserID)
	if errors.Is(err, domain.ErrNotFound) {
		p.fail(ctx, w, http.StatusBadRequest, "Approval no longer valid", "This approval page was already answered or has expired. Start again from the partner's application.")
		return
	}
	if err != nil {
		slog.ErrorContext(ctx, "take consent request", "error", err)
		p.fail(ctx, w, http.StatusServiceUnavailable, "Try again later", "The service is temporarily unavailable.")
		return
	}
	q := url.Values{}
	for k, v := range rec.Params {
		q.Set(k, v)
	}
	shown, err := http.NewRequestWithContext(ctx, http.MethodGet, "/oauth2/authorize?"+q.Encode(), nil)
	if err == nil {
		err = shown.ParseForm()
	}
	if err != nil {
		p.fail(ctx, w, http.StatusBadRequest, "Invalid request", "The request could not be read.")
		return
	}
	// The client may have been suspended, or its redirect URIs changed,
	// since the page was shown.
	client, ar, ok := p.authorizeRequest(ctx, w, shown)
	if !ok {
		return
	}
	p.consent(ctx, w, r, ar, rec, sess, client, pageData{ClientName: client.Name})
}

var errNotOffered = fosite.ErrInvalidRequest.WithHint("The choice is not one of those the consent page offered.")

func (p *Pages) consent(ctx context.Context, w http.ResponseWriter, r *http.Request, ar fosite.AuthorizeRequester, rec domain.ConsentRequest, sess browserSession, client domain.PartnerClient, d pageData) {
	if r.PostForm.Get("decision") != "approve" {
		p.srv.WriteAuthorizeError(ctx, w, ar, fosite.ErrAccessDenied.WithHint("The owner denied the request."))
		return
	}
	restaurant := r.PostForm.Get("restaurant")
	orgs := r.PostForm["organization"]
	g := domain.GrantRequest{ClientID: client.ClientID, UserID: sess.UserID, ExpiresAt: time.Now().Add(p.grantTTL)}
	switch {
	case restaurant != "" && len(orgs) > 0:
		p.showConsent(ctx, w, ar, sess, client, d, "Choose either one restaurant or one or more organizations, not both.", http.StatusBadRequest)
		return
	case restaurant != "":
		if !slices.Contains(rec.RestaurantIDs, restaurant) {
			p.srv.WriteAuthorizeError(ctx, w, ar, errNotOffered)
			return
		}
		g.Boundary, g.RestaurantID = domain.BoundaryRestaurant, restaurant
	case len(orgs) > 0:
		for _, o := range orgs {
			if !slices.Contains(rec.OrganizationIDs, o) {
				p.srv.WriteAuthorizeError(ctx, w, ar, errNotOffered)
				return
			}
		}
		g.Boundary, g.OrganizationIDs = domain.BoundaryOrganization, orgs
	default:
		p.showConsent(ctx, w, ar, sess, client, d, "Choose a restaurant or at least one organization to approve.", http.StatusBadRequest)
		return
	}
	g.Scopes = domain.ApprovedScopes(rec.Scopes, client.AllowedScopes, g.Boundary)
	if len(g.Scopes) == 0 {
		p.srv.WriteAuthorizeError(ctx, w, ar, fosite.ErrInvalidScope.WithHint("None of the requested scopes can be approved for this choice."))
		return
	}
	grantID, err := p.repo.CreateGrant(ctx, g)
	var ve *domain.ValidationError
	if errors.As(err, &ve) {
		p.showConsent(ctx, w, ar, sess, client, d, "Choose only restaurants you own or organizations you manage.", http.StatusBadRequest)
		return
	}
	if err != nil {
		slog.ErrorContext(ctx, "create grant", "error", err)
		p.srv.WriteAuthorizeError(ctx, w, ar, fosite.ErrServerError)
		return
	}
	for _, s := range g.Scopes {
		ar.GrantScope(s)
	}
	session := oauth.NewSession()
	session.Subject, session.GrantID = sess.UserID, grantID
	resp, err := p.srv.NewAuthorizeResponse(ctx, ar, session)
	if err != nil {
		p.srv.WriteAuthorizeError(ctx, w, ar, err)
		return
	}
	p.srv.WriteAuthorizeResponse(ctx, w, ar, resp)
}
