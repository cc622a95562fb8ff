package api

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
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
	// consentTTL is how long a consent page can be answered.
	consentTTL = 10 * time.Minute
)

// browserSession is the visitor of the sign-in, consent and connected-apps
// pages. The cookie holds only SID, a random id: it keys the CSRF and
// consent tokens, and, once the visitor signs in, a browser_sessions row
// (by its hash) that names the user. A cookie whose row has ended is an
// anonymous visitor's.
type browserSession struct {
	SID    string
	UserID string
}

// SessionSettings are the signed-in session's lifetimes: Idle since the
// last page, Max since sign-in.
type SessionSettings struct {
	Idle, Max time.Duration
}

// Pages serves GET/POST /oauth2/authorize: sign-in, consent, and the
// redirect back to the partner.
type Pages struct {
	srv      *oauth.Server
	repo     domain.Repository
	key      []byte
	secure   bool
	grantTTL time.Duration
	sessions SessionSettings
	// origin is the public base URL's scheme and host: the only Origin a
	// form post may come from.
	origin string
	// activity asks the events service for the connected-apps page (nil:
	// not configured).
	activity ActivitySource
}

func newPages(d Deps) *Pages {
	k := sha256.Sum256(append([]byte("identity.browser-session."), d.Secret...))
	return &Pages{srv: d.OAuth, repo: d.Repo, key: k[:], secure: d.Secure, grantTTL: d.GrantTTL, sessions: d.Sessions,
		origin: d.PublicOrigin, activity: d.Activity}
}

func (p *Pages) sign(b []byte) string {
	m := hmac.New(sha256.New, p.key)
	m.Write(b)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// sidBytes is the size of a session id; sidLen its length in the cookie.
const (
	sidBytes = 32
	sidLen   = 43
)

func newSID() string {
	b := make([]byte, sidBytes)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func sidHash(sid string) string {
	h := sha256.Sum256([]byte(sid))
	return hex.EncodeToString(h[:])
}

// readSession returns the request's session: present tells whether it
// carried a well-formed session cookie; UserID is set when the cookie names
// a live signed-in session, whose idle lifetime then starts again. err is
// the store's failure.
func (p *Pages) readSession(r *http.Request) (s browserSession, present bool, err error) {
	c, cerr := r.Cookie(sessionCookie)
	if cerr != nil || len(c.Value) != sidLen {
		return browserSession{}, false, nil
	}
	if _, derr := base64.RawURLEncoding.DecodeString(c.Value); derr != nil {
		return browserSession{}, false, nil
	}
	s.SID = c.Value
	s.UserID, err = p.repo.TouchSession(r.Context(), sidHash(s.SID), p.sessions.Idle)
	if errors.Is(err, domain.ErrNotFound) {
		return s, true, nil
	}
	return s, true, err
}

// writeSession sets the cookie of s. It lives as long as a signed-in
// session may; the server ends it sooner.
func (p *Pages) writeSession(w http.ResponseWriter, s browserSession) {
	http.SetCookie(w, &http.Cookie{ //nolint:gosec // Secure is set whenever the public base URL is https
		Name: sessionCookie, Value: s.SID,
		Path: "/", HttpOnly: true, Secure: p.secure, SameSite: http.SameSiteLaxMode, MaxAge: int(p.sessions.Max.Seconds()),
	})
	// A cookie of the old path (/oauth2/) would be sent first and shadow
	// this one until it expired, so it is removed.
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Path: "/oauth2/", HttpOnly: true, Secure: p.secure, SameSite: http.SameSiteLaxMode, MaxAge: -1}) //nolint:gosec // as above
}

// startSession signs userID in under a new session id (so a planted cookie
// cannot be promoted) and sets its cookie.
func (p *Pages) startSession(ctx context.Context, w http.ResponseWriter, userID string) error {
	s := browserSession{SID: newSID(), UserID: userID}
	if err := p.repo.StartSession(ctx, sidHash(s.SID), userID, p.sessions.Idle, p.sessions.Max); err != nil {
		return err
	}
	p.writeSession(w, s)
	return nil
}

// csrf is bound to the session id, so a token from another session fails.
func (p *Pages) csrf(s browserSession) string { return p.sign([]byte("csrf:" + s.SID)) }

// validToken checks a parsed form's CSRF token against the session.
func (p *Pages) validToken(r *http.Request, s browserSession) bool {
	return s.SID != "" && hmac.Equal([]byte(r.PostForm.Get("csrf_token")), []byte(p.csrf(s)))
}

// crossSite tells whether a form post comes from another site: the
// browser says so (Sec-Fetch-Site, sent by every current browser), or,
// from a browser that does not, its Origin, or without one its Referer,
// is not the public origin. Checked before the CSRF token, as defence in
// depth; a request from a non-browser client carries none of them and is
// judged by the token alone. (The pages' Referrer-Policy is same-origin:
// under no-referrer a browser would send its own forms with Origin: null.)
func (p *Pages) crossSite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return false
	case "":
	default:
		return true
	}
	if o := r.Header.Get("Origin"); o != "" {
		return o != p.origin
	}
	if ref := r.Header.Get("Referer"); ref != "" {
		return ref != p.origin && !strings.HasPrefix(ref, p.origin+"/")
	}
	return false
}

// refuseCrossSite answers a cross-site post with 403 and changes nothing,
// the visitor's session included.
func (p *Pages) refuseCrossSite(w http.ResponseWriter, r *http.Request) bool {
	if !p.crossSite(r) {
		return false
	}
	p.fail(r.Context(), w, http.StatusForbidden, "Request refused", "This form was sent from another site. Open the page again and send it from there.")
	return true
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
	// OrganizationsWithheld: the user manages organizations, but the app
	// did not ask for the scope an organization approval needs.
	OrganizationsWithheld bool
	CSS                   template.CSS
	// Apps and App are the connected-apps pages' content.
	Apps   []appView
	App    *appView
	Notice string
	// formTarget is where, besides this service, the page's form may end
	// up: the consent page's redirect back to the partner.
	formTarget string
}

// cspSource is a redirect URI as a Content-Security-Policy source: its
// origin, or its scheme alone for an app's own scheme (com.example:/cb);
// "" when it cannot be written as one.
var cspSource = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:(//([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]+)?)?$`)

func formTarget(redirectURI string) string {
	u, err := url.Parse(redirectURI)
	if err != nil || u.Scheme == "" {
		return ""
	}
	src := u.Scheme + ":"
	if u.Host != "" {
		src += "//" + u.Host
	}
	if !cspSource.MatchString(src) {
		return ""
	}
	return src
}

func (p *Pages) render(ctx context.Context, w http.ResponseWriter, status int, name string, d pageData) {
	d.CSS = web.CSS
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	formAction := "'self'"
	if d.formTarget != "" {
		formAction += " " + d.formTarget
	}
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action "+formAction+"; base-uri 'none'; frame-ancestors 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "same-origin")
	w.WriteHeader(status)
	if err := web.Templates.ExecuteTemplate(w, name, d); err != nil {
		slog.ErrorContext(ctx, "render page", "page", name, "error", err)
	}
}

func (p *Pages) fail(ctx context.Context, w http.ResponseWriter, status int, title, msg string) {
	p.render(ctx, w, status, "error", pageData{Title: title, Error: msg})
}

// unavailable answers 503 for a store that failed at what.
func (p *Pages) unavailable(ctx context.Context, w http.ResponseWriter, what string, err error) {
	slog.WarnContext(ctx, what, "error", err)
	p.fail(ctx, w, http.StatusServiceUnavailable, "Try again later", "The service is temporarily unavailable.")
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
	if r.Method == http.MethodPost && p.refuseCrossSite(w, r) {
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
	sess, present, err := p.readSession(r)
	if err != nil {
		p.unavailable(ctx, w, "read session", err)
		return
	}
	if !present {
		sess = browserSession{SID: newSID()}
		p.writeSession(w, sess)
	}
	d := pageData{Title: "Sign in", ClientName: client.Name, Action: actionURL(r.Form), CSRF: p.csrf(sess)}

	if r.Method == http.MethodPost {
		if !present || !p.validToken(r, sess) {
			// The session stays as it was: a forged post signs nobody out.
			d.Error = "Your session expired. Please sign in again."
			p.render(r.Context(), w, http.StatusForbidden, "signin", d)
			return
		}
		if r.PostForm.Get("action") == "signin" {
			p.signIn(ctx, w, r, d, d.Action)
			return
		}
	}
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
func (p *Pages) signIn(ctx context.Context, w http.ResponseWriter, r *http.Request, d pageData, next string) {
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
		d.Error = "The email or password is not correct."
		p.render(ctx, w, http.StatusUnauthorized, "signin", d)
		return
	}
	_ = st.ClearSignInFailures(ctx, email)
	if err := p.startSession(ctx, w, u.ID); err != nil {
		p.unavailable(ctx, w, "start session", err)
		return
	}
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
	if errors.Is(err, domain.ErrNotFound) {
		p.render(ctx, w, http.StatusOK, "signin", d)
		return
	}
	if err != nil {
		p.unavailable(ctx, w, "load user", err)
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
	// Every call under an organization approval needs the organization
	// scope: without it the approval would work for nothing, so it is not
	// offered.
	if !slices.Contains(rec.Scopes, contracts.ScopeOrganizationRead) && len(opts.Organizations) > 0 {
		opts.Organizations, d.Organizations, d.OrganizationsWithheld = nil, nil, true
	}
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
	d.formTarget = formTarget(ar.GetRedirectURI().String())
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
	sess, _, err := p.readSession(r)
	if err != nil {
		p.unavailable(ctx, w, "read session", err)
		return
	}
	if sess.UserID == "" || !p.validToken(r, sess) {
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
	// The token carries the scopes of this approval, even when it extended
	// a grant that holds more: a partner gets what it asked for, as narrow
	// as it asked (every call needs its scopes in the token and the grant).
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
