package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/identity/internal/domain"
)

// The connected-apps pages: a signed-in owner or organization administrator
// sees every grant that reaches their restaurants or organizations, and
// revokes those that reach nothing else. They share the sign-in pages'
// session, CSRF tokens and rules (server-rendered, no JavaScript).
const (
	accountPath = "/account"
	// maxConnectedApps bounds the grants one page lists.
	maxConnectedApps = 200
)

// accountNext is every address the account sign-in may go back to.
var accountNext = regexp.MustCompile(`^/account(/authorizations/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})?$`)

type account struct{ p *Pages }

// appView is one grant on the connected-apps pages.
type appView struct {
	GrantID, ClientName, Status      string
	ApprovedBy, ApprovedByEmail      string
	ApprovedAt, RevokedAt, ExpiresAt string
	// LastUsed is when the app last called the API under this grant,
	// rounded (lastUsedWords).
	LastUsed      string
	Scopes        []scopeLine
	Restaurants   []string
	Organizations []orgLine
	// Outside names what the grant covers beyond the viewer's reach.
	Outside string
	// Activity is the app's latest changes on the viewer's restaurants,
	// newest first; WebhookHosts where its webhooks go (host and
	// restaurant). ActivityShown: the events service answered;
	// ActivityUnavailable: it was asked and did not.
	Activity                           []activityLine
	WebhookHosts                       []string
	ActivityShown, ActivityUnavailable bool
	// CSRF is the session's token for the forms inside the app's section.
	CSRF string
}

type orgLine struct {
	ID, Name               string
	Authorized, Additional int
	// NewRestaurants names the restaurants added since approval and not
	// covered; Approvable: the viewer may approve them for the app now
	// (an active grant, an organization they administer, on the list page).
	NewRestaurants string
	Approvable     bool
}

func dateTime(t time.Time) string { return t.UTC().Format("2 January 2006, 15:04 UTC") }

// lastUsedWords rounds the gateway's record of use (to the minute, sent
// every 30 s) to what it can tell: within minutes, hours, or the day.
func lastUsedWords(at *time.Time, now time.Time) string {
	if at == nil {
		return "Not used yet"
	}
	d := now.Sub(*at)
	switch {
	case d < 5*time.Minute:
		return "Last used within the last 5 minutes"
	case d < time.Hour:
		return fmt.Sprintf("Last used about %d minutes ago", int(d/(5*time.Minute))*5)
	case d < 2*time.Hour:
		return "Last used about an hour ago"
	case d < 48*time.Hour:
		return fmt.Sprintf("Last used about %d hours ago", int(d/time.Hour))
	}
	return "Last used on " + at.UTC().Format("2 January 2006")
}

func newAppView(a domain.ConnectedApp, now time.Time) appView {
	g := a.Coverage.Grant
	v := appView{GrantID: g.ID, ClientName: a.ClientName, Status: g.Status, ApprovedBy: a.ApprovedBy.Name, ApprovedByEmail: a.ApprovedBy.Email,
		ApprovedAt: dateTime(g.CreatedAt), ExpiresAt: dateTime(g.ExpiresAt), LastUsed: lastUsedWords(g.LastUsedAt, now), Outside: strings.Join(a.Outside, ", ")}
	if g.RevokedAt != nil {
		v.RevokedAt = dateTime(*g.RevokedAt)
	}
	for _, s := range g.Scopes {
		v.Scopes = append(v.Scopes, scopeLine{Name: s, Words: domain.ScopeWords(s)})
	}
	perOrg := map[string]int{}
	for _, r := range a.Coverage.Restaurants {
		perOrg[r.OrganizationID]++
		if !slices.Contains(v.Restaurants, r.Name) {
			v.Restaurants = append(v.Restaurants, r.Name)
		}
	}
	for _, o := range a.Coverage.Organizations {
		v.Organizations = append(v.Organizations, orgLine{ID: o.OrganizationID, Name: o.Name, Authorized: perOrg[o.OrganizationID],
			Additional: len(o.AdditionalRestaurantIDs), NewRestaurants: nameList(o.AdditionalRestaurantNames)})
	}
	return v
}

// nameList names up to five restaurants, then how many more.
func nameList(names []string) string {
	if len(names) <= 5 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:5], ", "), len(names)-5)
}

// offerNewRestaurants lets the viewer approve, on the list page, the
// restaurants each organization they administer gained since an active
// grant's approval.
func offerNewRestaurants(v *appView, reach domain.Reach, csrf string) {
	if v.Status != "active" {
		return
	}
	for i, o := range v.Organizations {
		if o.Additional > 0 && reach.Organizations[o.ID] {
			v.Organizations[i].Approvable, v.CSRF = true, csrf
		}
	}
}

// user returns the signed-in user of a request; without one it shows the
// sign-in page, which comes back to next.
func (a account) user(ctx context.Context, w http.ResponseWriter, r *http.Request, next string) (browserSession, domain.User, bool) {
	sess, present, err := a.p.readSession(r)
	if err != nil {
		a.p.unavailable(ctx, w, "read session", err)
		return sess, domain.User{}, false
	}
	if !present {
		sess = browserSession{SID: newSID()}
		a.p.writeSession(w, sess)
	}
	if sess.UserID != "" {
		u, err := a.p.repo.UserByID(ctx, sess.UserID)
		if err == nil {
			return sess, u, true
		}
		if !errors.Is(err, domain.ErrNotFound) {
			a.unavailable(ctx, w)
			return sess, u, false
		}
	}
	a.p.render(ctx, w, http.StatusOK, "signin", pageData{Title: "Sign in", Action: accountPath + "/sign-in", Next: next, CSRF: a.p.csrf(sess)})
	return sess, domain.User{}, false
}

func (a account) unavailable(ctx context.Context, w http.ResponseWriter) {
	a.p.fail(ctx, w, http.StatusServiceUnavailable, "Try again later", "The service is temporarily unavailable.")
}

func (a account) notFound(ctx context.Context, w http.ResponseWriter) {
	a.p.render(ctx, w, http.StatusNotFound, "account_error", pageData{Title: "Not found", Error: "There is no connected app at this address for your account."})
}

// validPost checks a form's CSRF token against the session; a mismatch
// answers 403 and changes nothing, the session included.
func (a account) validPost(w http.ResponseWriter, r *http.Request, sess browserSession) bool {
	if err := r.ParseForm(); err == nil && a.p.validToken(r, sess) {
		return true
	}
	a.p.render(r.Context(), w, http.StatusForbidden, "account_error", pageData{Title: "Session expired", Error: "Your session expired. Open the connected apps page again."})
	return false
}

// signIn is POST /account/sign-in.
func (a account) signIn(w http.ResponseWriter, r *http.Request) {
	if a.p.refuseCrossSite(w, r) {
		return
	}
	sess, present, err := a.p.readSession(r)
	if err != nil {
		a.p.unavailable(r.Context(), w, "read session", err)
		return
	}
	if err := r.ParseForm(); err != nil {
		a.p.fail(r.Context(), w, http.StatusBadRequest, "Invalid request", "The request could not be read.")
		return
	}
	next := r.PostForm.Get("next")
	if !accountNext.MatchString(next) {
		next = accountPath
	}
	d := pageData{Title: "Sign in", Action: accountPath + "/sign-in", Next: next}
	if !present {
		sess = browserSession{SID: newSID()}
		a.p.writeSession(w, sess)
	}
	d.CSRF = a.p.csrf(sess)
	if !present || !a.p.validToken(r, sess) {
		// The session stays as it was: a forged post signs nobody out.
		d.Error = "Your session expired. Please sign in again."
		a.p.render(r.Context(), w, http.StatusForbidden, "signin", d)
		return
	}
	a.p.signIn(r.Context(), w, r, d, next)
}

// signOut is POST /account/sign-out: it ends this browser's session.
func (a account) signOut(w http.ResponseWriter, r *http.Request) {
	a.endSessions(w, r, false)
}

// signOutEverywhere is POST /account/sign-out-everywhere: it ends every
// session of the signed-in user, on every device.
func (a account) signOutEverywhere(w http.ResponseWriter, r *http.Request) {
	a.endSessions(w, r, true)
}

func (a account) endSessions(w http.ResponseWriter, r *http.Request, everywhere bool) {
	if a.p.refuseCrossSite(w, r) {
		return
	}
	ctx := r.Context()
	sess, _, err := a.p.readSession(r)
	if err != nil {
		a.p.unavailable(ctx, w, "read session", err)
		return
	}
	if !a.validPost(w, r, sess) {
		return
	}
	if everywhere && sess.UserID != "" {
		_, err = a.p.repo.EndUserSessions(ctx, sess.UserID)
	} else {
		err = a.p.repo.EndSession(ctx, sidHash(sess.SID))
	}
	if err != nil {
		a.p.unavailable(ctx, w, "end sessions", err)
		return
	}
	a.p.writeSession(w, browserSession{SID: newSID()})
	http.Redirect(w, r, accountPath, http.StatusSeeOther)
}

// list is GET /account: every grant the user may see, active ones first.
func (a account) list(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	sess, u, ok := a.user(ctx, w, r, accountPath)
	if !ok {
		return
	}
	d := pageData{Title: "Connected apps", UserName: u.Name, UserEmail: u.Email, CSRF: a.p.csrf(sess)}
	reach, apps, names, err := a.connectedApps(ctx, u.ID)
	if err != nil {
		slog.ErrorContext(ctx, "connected apps", "error", err)
		a.unavailable(r.Context(), w)
		return
	}
	for _, app := range apps {
		v := newAppView(app, time.Now())
		offerNewRestaurants(&v, reach, d.CSRF)
		d.Apps = append(d.Apps, v)
	}
	a.activity(ctx, reach, apps, names, d.Apps)
	slices.SortStableFunc(d.Apps, func(x, y appView) int {
		return boolOrder(x.Status != "active") - boolOrder(y.Status != "active")
	})
	switch q := r.URL.Query(); {
	case q.Get("revoked") != "":
		d.Notice = "Access revoked."
	case q.Get("approved") != "":
		d.Notice = "The new restaurants are now covered."
	}
	a.p.render(r.Context(), w, http.StatusOK, "account", d)
}

// connectedApps loads every grant the user may see, newest first, with
// the user's reach and the names loaded on the way.
func (a account) connectedApps(ctx context.Context, userID string) (domain.Reach, []domain.ConnectedApp, appNames, error) {
	reach, err := a.p.repo.Reach(ctx, userID)
	if err != nil {
		return reach, nil, newAppNames(), err
	}
	apps, names, err := connectedApps(ctx, a.p.repo, reach)
	return reach, apps, names, err
}

// connectedApps loads every grant that reaches something of reach, newest
// first (at most maxConnectedApps).
func connectedApps(ctx context.Context, repo domain.Repository, reach domain.Reach) ([]domain.ConnectedApp, appNames, error) {
	names := newAppNames()
	ids, err := repo.GrantsTouching(ctx, reach, maxConnectedApps)
	if err != nil {
		return nil, names, err
	}
	var out []domain.ConnectedApp
	for _, id := range ids {
		app, err := connectedApp(ctx, repo, reach, id, names)
		if errors.Is(err, domain.ErrNotFound) {
			continue // no longer covers anything of the reach
		}
		if err != nil {
			return nil, names, err
		}
		out = append(out, app)
	}
	return out, names, nil
}

func boolOrder(b bool) int {
	if b {
		return 1
	}
	return 0
}

// appNames caches client names and approvers while one page is built.
type appNames struct {
	clients map[string]string
	users   map[string]domain.User
}

func newAppNames() appNames {
	return appNames{clients: map[string]string{}, users: map[string]domain.User{}}
}

// user returns a user's name by id, once per page; false when unknown.
func (n appNames) user(ctx context.Context, repo domain.Repository, id string) (domain.User, bool) {
	if u, ok := n.users[id]; ok {
		return u, true
	}
	u, err := repo.UserByID(ctx, id)
	if err != nil {
		return u, false
	}
	u.PasswordHash = ""
	n.users[id] = u
	return u, true
}

// connectedApp loads a grant for a user who reaches it; ErrNotFound when it
// reaches nothing of theirs (or does not exist), so a guessed id tells
// nothing.
func connectedApp(ctx context.Context, repo domain.Repository, reach domain.Reach, grantID string, names appNames) (domain.ConnectedApp, error) {
	if !domain.CanonicalID(grantID) {
		return domain.ConnectedApp{}, domain.ErrNotFound
	}
	cov, err := repo.Coverage(ctx, grantID)
	if err != nil {
		return domain.ConnectedApp{}, err
	}
	if !reach.Sees(cov) {
		return domain.ConnectedApp{}, domain.ErrNotFound
	}
	app := domain.ConnectedApp{Coverage: cov, Outside: reach.Outside(cov)}
	var ok bool
	if app.ClientName, ok = names.clients[cov.Grant.ClientID]; !ok {
		c, err := repo.Client(ctx, cov.Grant.ClientID)
		if err != nil {
			return app, err
		}
		app.ClientName, names.clients[c.ClientID] = c.Name, c.Name
	}
	if app.ApprovedBy, ok = names.users[cov.Grant.UserID]; !ok {
		u, err := repo.UserByID(ctx, cov.Grant.UserID)
		if err != nil {
			return app, err
		}
		u.PasswordHash = ""
		app.ApprovedBy, names.users[u.ID] = u, u
	}
	return app, nil
}

// load is the signed-in user and one grant they may see, or the answer
// already written.
func (a account) load(w http.ResponseWriter, r *http.Request, grantID string) (browserSession, domain.Reach, domain.ConnectedApp, bool) {
	ctx := r.Context()
	sess, u, ok := a.user(ctx, w, r, accountPath+"/authorizations/"+grantID)
	if !ok {
		return sess, domain.Reach{}, domain.ConnectedApp{}, false
	}
	reach, err := a.p.repo.Reach(ctx, u.ID)
	var app domain.ConnectedApp
	if err == nil {
		app, err = connectedApp(ctx, a.p.repo, reach, grantID, newAppNames())
	}
	switch {
	case errors.Is(err, domain.ErrNotFound):
		a.notFound(r.Context(), w)
		return sess, reach, app, false
	case err != nil:
		slog.ErrorContext(ctx, "connected app", "error", err)
		a.unavailable(r.Context(), w)
		return sess, reach, app, false
	}
	return sess, reach, app, true
}

// confirm is GET /account/authorizations/{grantId}: what revoking stops,
// and the button.
func (a account) confirm(w http.ResponseWriter, r *http.Request, grantID string) {
	sess, reach, app, ok := a.load(w, r, grantID)
	if !ok {
		return
	}
	v := []appView{newAppView(app, time.Now())}
	a.activity(r.Context(), reach, []domain.ConnectedApp{app}, newAppNames(), v)
	a.p.render(r.Context(), w, http.StatusOK, "account_revoke", pageData{Title: "Revoke access for " + v[0].ClientName, App: &v[0], CSRF: a.p.csrf(sess)})
}

// revoke is POST /account/authorizations/{grantId}/revoke. It ends the
// grant at once (every token of it, at the gateway within its grant cache
// lifetime), unless the grant also covers what the user does not own or
// administer.
func (a account) revoke(w http.ResponseWriter, r *http.Request, grantID string) {
	if a.p.refuseCrossSite(w, r) {
		return
	}
	sess, _, app, ok := a.load(w, r, grantID)
	if !ok || !a.validPost(w, r, sess) {
		return
	}
	v := newAppView(app, time.Now())
	if len(app.Outside) > 0 {
		a.p.render(r.Context(), w, http.StatusForbidden, "account_revoke", pageData{Title: "Revoke access for " + v.ClientName, App: &v, CSRF: a.p.csrf(sess)})
		return
	}
	if _, err := a.p.repo.RevokeGrant(r.Context(), grantID, contracts.RevokedByOwner); err != nil {
		slog.ErrorContext(r.Context(), "revoke grant", "error", err)
		a.unavailable(r.Context(), w)
		return
	}
	http.Redirect(w, r, accountPath+"?revoked=1", http.StatusSeeOther)
}

// approveNew is POST /account/authorizations/{grantId}/approve-new: the
// viewer approves again, for an active organization grant, the restaurants
// an organization they administer (form field organization_id) gained since
// approval; the partner reaches them within the gateway's grant cache
// lifetime. An organization the grant does not name or the viewer does not
// administer is 404, like a grant beyond reach.
func (a account) approveNew(w http.ResponseWriter, r *http.Request, grantID string) {
	if a.p.refuseCrossSite(w, r) {
		return
	}
	sess, reach, _, ok := a.load(w, r, grantID)
	if !ok || !a.validPost(w, r, sess) {
		return
	}
	org := r.PostForm.Get("organization_id")
	if !reach.Organizations[org] {
		a.notFound(r.Context(), w)
		return
	}
	_, err := a.p.repo.CoverNewRestaurants(r.Context(), grantID, org)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		a.notFound(r.Context(), w)
	case errors.Is(err, domain.ErrGrantNotActive):
		a.p.render(r.Context(), w, http.StatusConflict, "account_error", pageData{Title: "Not active", Error: "This authorization was revoked or has expired: it cannot cover more restaurants. The app asks you to approve again when it needs access."})
	case err != nil:
		slog.ErrorContext(r.Context(), "cover new restaurants", "error", err)
		a.unavailable(r.Context(), w)
	default:
		http.Redirect(w, r, accountPath+"?approved=1", http.StatusSeeOther)
	}
}

// withGrant mounts a page handler that takes the path's grant id.
func withGrant(h func(http.ResponseWriter, *http.Request, string)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id := c.Params("grantId")
		return mount(func(w http.ResponseWriter, r *http.Request) { h(w, r, id) })(c)
	}
}
