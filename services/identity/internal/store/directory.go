package store

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"

	"partnerapi.dev/pkg/outbox"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/identity/internal/domain"
	"partnerapi.dev/services/identity/internal/password"
)

// ClientSecretCost is the bcrypt cost of client secrets (fosite compares
// them with bcrypt). A variable for the tests, which set bcrypt.MinCost:
// under the race detector one hash at cost 10 takes about 0.7 s of CPU, and
// every server test seeds a confidential client and signs its requests.
var ClientSecretCost = 10

type clientRow struct {
	ID         string
	Name       string
	Type       string
	SecretHash *string
	// PreviousSecretHash is NULL once its overlap ended (see clientCols).
	PreviousSecretHash *string
	RedirectURIs       jsonList `gorm:"column:redirect_uris"`
	AllowedScopes      jsonList
	Status             string
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

func (r clientRow) domain() domain.PartnerClient {
	c := domain.PartnerClient{ClientID: r.ID, Name: r.Name, Type: r.Type, RedirectURIs: r.RedirectURIs, AllowedScopes: r.AllowedScopes, Status: r.Status, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if r.SecretHash != nil {
		c.SecretHash = *r.SecretHash
	}
	if r.PreviousSecretHash != nil {
		c.PreviousSecretHash = *r.PreviousSecretHash
	}
	return c
}

// Import upserts a directory document by id in one transaction.
func (s *Store) Import(ctx context.Context, d domain.DirectoryImport) (domain.ImportResult, error) {
	if err := domain.ValidateImport(d); err != nil {
		return domain.ImportResult{}, err
	}
	// Hash outside the transaction: argon2 and bcrypt are slow on purpose.
	hashes := make([]string, len(d.Users))
	existing := map[string]string{}
	if len(d.Users) > 0 {
		ids := make([]string, len(d.Users))
		for i, u := range d.Users {
			ids[i] = u.UserID
		}
		var rows []struct{ ID, PasswordHash string }
		if err := s.conn(ctx).Raw(`SELECT id, password_hash FROM users WHERE id IN ?`, ids).Scan(&rows).Error; err != nil {
			return domain.ImportResult{}, err
		}
		for _, r := range rows {
			existing[r.ID] = r.PasswordHash
		}
	}
	for i, u := range d.Users {
		if h, ok := existing[u.UserID]; ok {
			if same, _ := password.Verify(ctx, h, u.Password); same {
				hashes[i] = h
				continue
			}
		}
		h, err := password.Hash(ctx, u.Password)
		if err != nil {
			return domain.ImportResult{}, err
		}
		hashes[i] = h
	}
	secrets := make([]*string, len(d.PartnerClients))
	for i, c := range d.PartnerClients {
		if c.Secret == nil {
			continue
		}
		var cur string
		_ = s.conn(ctx).Raw(`SELECT coalesce(secret_hash, '') FROM partner_clients WHERE id = ?`, c.ClientID).Scan(&cur).Error
		if cur != "" && bcrypt.CompareHashAndPassword([]byte(cur), []byte(*c.Secret)) == nil {
			secrets[i] = &cur
			continue
		}
		h, err := bcrypt.GenerateFromPassword([]byte(*c.Secret), ClientSecretCost)
		if err != nil {
			return domain.ImportResult{}, err
		}
		hs := string(h)
		secrets[i] = &hs
	}

	res := domain.ImportResult{Users: len(d.Users), Organizations: len(d.Organizations), Restaurants: len(d.Restaurants), Memberships: len(d.Memberships), PartnerClients: len(d.PartnerClients)}
	err := s.inTx(ctx, func(ctx context.Context, tx *gorm.DB) error {
		for i, u := range d.Users {
			if err := tx.Exec(`INSERT INTO users (id, email, name, password_hash) VALUES (?, ?, ?, ?)
				ON CONFLICT (id) DO UPDATE SET email = excluded.email, name = excluded.name, password_hash = excluded.password_hash, updated_at = now()
				WHERE (users.email, users.name, users.password_hash) IS DISTINCT FROM (excluded.email, excluded.name, excluded.password_hash)`,
				u.UserID, u.Email, u.Name, hashes[i]).Error; err != nil {
				return describeConflict(err, fmt.Sprintf("users[%d].email: %q is already used by another user", i, u.Email))
			}
		}
		for _, o := range d.Organizations {
			if err := tx.Exec(`INSERT INTO organizations (id, name, registered_name, business_id) VALUES (?, ?, ?, ?)
				ON CONFLICT (id) DO UPDATE SET name = excluded.name, registered_name = excluded.registered_name, business_id = excluded.business_id, updated_at = now()
				WHERE (organizations.name, organizations.registered_name, organizations.business_id) IS DISTINCT FROM (excluded.name, excluded.registered_name, excluded.business_id)`,
				o.OrganizationID, o.Name, o.RegisteredName, o.BusinessID).Error; err != nil {
				return err
			}
		}
		for i, r := range d.Restaurants {
			if err := tx.Exec(`INSERT INTO restaurants (id, name, time_zone, day_start_hour, currency, country, registered_name, business_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (id) DO UPDATE SET name = excluded.name, time_zone = excluded.time_zone, day_start_hour = excluded.day_start_hour, currency = excluded.currency,
					country = excluded.country, registered_name = excluded.registered_name, business_id = excluded.business_id, updated_at = now()
				WHERE (restaurants.name, restaurants.time_zone, restaurants.day_start_hour, restaurants.currency, restaurants.country, restaurants.registered_name, restaurants.business_id)
					IS DISTINCT FROM (excluded.name, excluded.time_zone, excluded.day_start_hour, excluded.currency, excluded.country, excluded.registered_name, excluded.business_id)`,
				r.RestaurantID, r.Name, r.TimeZone, *r.DayStartHour, r.Currency, r.Country, r.RegisteredName, r.BusinessID).Error; err != nil {
				return err
			}
			if r.OrganizationIDs == nil {
				continue
			}
			if err := tx.Exec(`DELETE FROM organization_restaurants WHERE restaurant_id = ? AND NOT (organization_id::text = ANY (?))`, r.RestaurantID, pgTextArray(r.OrganizationIDs)).Error; err != nil {
				return err
			}
			for j, o := range r.OrganizationIDs {
				if err := tx.Exec(`INSERT INTO organization_restaurants (organization_id, restaurant_id) VALUES (?, ?) ON CONFLICT DO NOTHING`, o, r.RestaurantID).Error; err != nil {
					return describeFK(err, fmt.Sprintf("restaurants[%d].organizationIds[%d]: organization %s does not exist", i, j, o))
				}
			}
		}
		for i, m := range d.Memberships {
			var err error
			if m.RestaurantID != nil {
				err = tx.Exec(`INSERT INTO memberships (user_id, restaurant_id, role) VALUES (?, ?, ?)
					ON CONFLICT (user_id, restaurant_id) WHERE restaurant_id IS NOT NULL DO UPDATE SET role = excluded.role`, m.UserID, *m.RestaurantID, m.Role).Error
			} else {
				err = tx.Exec(`INSERT INTO memberships (user_id, organization_id, role) VALUES (?, ?, ?)
					ON CONFLICT (user_id, organization_id) WHERE organization_id IS NOT NULL DO UPDATE SET role = excluded.role`, m.UserID, *m.OrganizationID, m.Role).Error
			}
			if err != nil {
				return describeFK(err, fmt.Sprintf("memberships[%d]: the user, restaurant or organization does not exist", i))
			}
		}
		for i, c := range d.PartnerClients {
			if err := tx.Exec(`INSERT INTO partner_clients (id, name, type, secret_hash, redirect_uris, allowed_scopes, status) VALUES (?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (id) DO UPDATE SET name = excluded.name, type = excluded.type, secret_hash = excluded.secret_hash, redirect_uris = excluded.redirect_uris,
					allowed_scopes = excluded.allowed_scopes, status = excluded.status, updated_at = now()
				WHERE (partner_clients.name, partner_clients.type, partner_clients.secret_hash, partner_clients.redirect_uris, partner_clients.allowed_scopes, partner_clients.status)
					IS DISTINCT FROM (excluded.name, excluded.type, excluded.secret_hash, excluded.redirect_uris, excluded.allowed_scopes, excluded.status)`,
				c.ClientID, c.Name, c.Type, secrets[i], jsonList(c.RedirectURIs), jsonList(c.AllowedScopes), c.Status).Error; err != nil {
				return err
			}
		}
		return nil
	})
	return res, err
}

// pgTextArray renders a Postgres text[] literal for ANY (?).
func pgTextArray(v []string) string {
	q := make([]string, len(v))
	for i, s := range v {
		q[i] = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
	}
	return "{" + strings.Join(q, ",") + "}"
}

// pgTimeArray is a timestamptz[] literal of times.
func pgTimeArray(v []time.Time) string {
	q := make([]string, len(v))
	for i, t := range v {
		q[i] = `"` + t.Format(time.RFC3339Nano) + `"`
	}
	return "{" + strings.Join(q, ",") + "}"
}

func describeConflict(err error, msg string) error {
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return domain.Invalid("%s", msg)
	}
	return err
}

func describeFK(err error, msg string) error {
	if errors.Is(err, gorm.ErrForeignKeyViolated) {
		return domain.Invalid("%s", msg)
	}
	return err
}

// UserByEmail finds a user for sign-in.
func (s *Store) UserByEmail(ctx context.Context, email string) (domain.User, error) {
	var u domain.User
	err := s.conn(ctx).Raw(`SELECT id::text AS id, email, name, password_hash FROM users WHERE lower(email) = lower(?)`, email).Take(&u).Error
	return u, notFound(err)
}

// UserByID finds a signed-in user.
func (s *Store) UserByID(ctx context.Context, id string) (domain.User, error) {
	if _, err := uuid.Parse(id); err != nil {
		return domain.User{}, domain.ErrNotFound
	}
	var u domain.User
	err := s.conn(ctx).Raw(`SELECT id::text AS id, email, name, password_hash FROM users WHERE id = ?`, id).Take(&u).Error
	return u, notFound(err)
}

// StartSignIn records a sign-in attempt for email as a failure (it stays
// one unless the sign-in succeeds) and then, in a statement of its own,
// counts the failures within window, this one included. Recording before
// counting is what makes the limit hold for attempts made at the same time:
// of the attempts that find at most n failures, none can miss another's
// record, so at most n of them go on to check a password.
func (s *Store) StartSignIn(ctx context.Context, email string, window time.Duration) (attempt int64, failures int, err error) {
	db := s.conn(ctx)
	now := s.now()
	if err := db.Raw(`INSERT INTO sign_in_failures (email, failed_at) VALUES (?, ?) RETURNING id`, strings.ToLower(email), now).Scan(&attempt).Error; err != nil {
		return 0, 0, err
	}
	err = db.Raw(`SELECT count(*) FROM sign_in_failures WHERE lower(email) = lower(?) AND failed_at > ?`, email, now.Add(-window)).Scan(&failures).Error
	return attempt, failures, err
}

// ForgetSignInAttempt removes the record of an attempt that was refused
// without checking a password.
func (s *Store) ForgetSignInAttempt(ctx context.Context, attempt int64) error {
	return s.conn(ctx).Exec(`DELETE FROM sign_in_failures WHERE id = ?`, attempt).Error
}

// ClearSignInFailures forgets failures after a successful sign-in.
func (s *Store) ClearSignInFailures(ctx context.Context, email string) error {
	return s.conn(ctx).Exec(`DELETE FROM sign_in_failures WHERE lower(email) = lower(?)`, email).Error
}

// --- partner clients ---

const clientCols = `id, name, type, secret_hash,
	CASE WHEN previous_secret_expires_at > now() THEN previous_secret_hash END AS previous_secret_hash,
	redirect_uris, allowed_scopes, status, created_at, updated_at`

// Client returns a partner client whatever its status.
func (s *Store) Client(ctx context.Context, id string) (domain.PartnerClient, error) {
	var r clientRow
	err := s.conn(ctx).Raw(`SELECT `+clientCols+` FROM partner_clients WHERE id = ?`, id).Take(&r).Error
	if err != nil {
		return domain.PartnerClient{}, notFound(err)
	}
	return r.domain(), nil
}

// Clients lists partner clients by id.
func (s *Store) Clients(ctx context.Context) ([]domain.PartnerClient, error) {
	var rows []clientRow
	if err := s.conn(ctx).Raw(`SELECT ` + clientCols + ` FROM partner_clients ORDER BY id`).Scan(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]domain.PartnerClient, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// CreateClient registers a client; for a confidential one it returns the
// generated secret, shown once.
func (s *Store) CreateClient(ctx context.Context, c domain.NewClient) (domain.PartnerClient, string, error) {
	if c.Status == "" {
		c.Status = domain.ClientPending
	}
	if c.ClientID == "" {
		c.ClientID = "pc-" + uuid.NewString()[:13]
	}
	if err := domain.ValidateClient(c.ClientID, c.Name, c.Type, c.RedirectURIs, c.AllowedScopes, c.Status); err != nil {
		return domain.PartnerClient{}, "", err
	}
	var secret string
	var hash *string
	if c.Type == domain.ClientConfidential {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		secret = base64.RawURLEncoding.EncodeToString(b)
		h, err := bcrypt.GenerateFromPassword([]byte(secret), ClientSecretCost)
		if err != nil {
			return domain.PartnerClient{}, "", err
		}
		hs := string(h)
		hash = &hs
	}
	err := s.conn(ctx).Exec(`INSERT INTO partner_clients (id, name, type, secret_hash, redirect_uris, allowed_scopes, status) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		c.ClientID, c.Name, c.Type, hash, jsonList(c.RedirectURIs), jsonList(c.AllowedScopes), c.Status).Error
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return domain.PartnerClient{}, "", domain.ErrConflict
	}
	if err != nil {
		return domain.PartnerClient{}, "", err
	}
	pc, err := s.Client(ctx, c.ClientID)
	return pc, secret, err
}

// MaxSecretOverlap bounds how long a rotated-out client secret keeps working.
const MaxSecretOverlap = 7 * 24 * time.Hour

// RotateClientSecret makes secret the confidential client's secret; the previous
// one keeps working for overlap.
func (s *Store) RotateClientSecret(ctx context.Context, id, secret string, overlap time.Duration) (domain.PartnerClient, error) {
	if len(secret) < 24 || len(secret) > 72 {
		return domain.PartnerClient{}, domain.Invalid("clientSecret: 24 to 72 characters")
	}
	if overlap < 0 || overlap > MaxSecretOverlap {
		return domain.PartnerClient{}, domain.Invalid("overlapSeconds: 0 to %d", int(MaxSecretOverlap.Seconds()))
	}
	// Hash outside the transaction: bcrypt is slow on purpose.
	h, err := bcrypt.GenerateFromPassword([]byte(secret), ClientSecretCost)
	if err != nil {
		return domain.PartnerClient{}, err
	}
	var out domain.PartnerClient
	err = s.inTx(ctx, func(ctx context.Context, tx *gorm.DB) error {
		var r clientRow
		if err := tx.Raw(`SELECT `+clientCols+` FROM partner_clients WHERE id = ? FOR UPDATE`, id).Take(&r).Error; err != nil {
			return notFound(err)
		}
		if r.Type != domain.ClientConfidential {
			return domain.Invalid("clientId: %s is a public client and has no secret", id)
		}
		// The secret it already has: nothing rotates, so the previous one
		// keeps its overlap (a repeated call, or the operator seeing its
		// Secret change in metadata only).
		if r.SecretHash != nil && bcrypt.CompareHashAndPassword([]byte(*r.SecretHash), []byte(secret)) == nil {
			c, err := s.Client(ctx, id)
			out = c
			return err
		}
		if err := tx.Exec(`UPDATE partner_clients SET previous_secret_hash = secret_hash,
			previous_secret_expires_at = now() + make_interval(secs => ?), secret_hash = ?, updated_at = now() WHERE id = ?`,
			overlap.Seconds(), string(h), id).Error; err != nil {
			return err
		}
		c, err := s.Client(ctx, id)
		out = c
		return err
	})
	return out, err
}

// UpdateClient applies u.
func (s *Store) UpdateClient(ctx context.Context, id string, u domain.ClientUpdate) (domain.PartnerClient, error) {
	var out domain.PartnerClient
	err := s.inTx(ctx, func(ctx context.Context, tx *gorm.DB) error {
		var r clientRow
		if err := tx.Raw(`SELECT `+clientCols+` FROM partner_clients WHERE id = ? FOR UPDATE`, id).Take(&r).Error; err != nil {
			return notFound(err)
		}
		if u.Name != nil {
			r.Name = *u.Name
		}
		if u.RedirectURIs != nil {
			r.RedirectURIs = u.RedirectURIs
		}
		if u.AllowedScopes != nil {
			r.AllowedScopes = u.AllowedScopes
		}
		if u.Status != nil {
			r.Status = *u.Status
		}
		if err := domain.ValidateClient(r.ID, r.Name, r.Type, r.RedirectURIs, r.AllowedScopes, r.Status); err != nil {
			return err
		}
		if err := tx.Exec(`UPDATE partner_clients SET name = ?, redirect_uris = ?, allowed_scopes = ?, status = ?, updated_at = now() WHERE id = ?`,
			r.Name, r.RedirectURIs, r.AllowedScopes, r.Status, id).Error; err != nil {
			return err
		}
		c, err := s.Client(ctx, id)
		out = c
		return err
	})
	return out, err
}

// --- consent and grants ---

// ConsentOptions lists what the user may approve.
func (s *Store) ConsentOptions(ctx context.Context, userID string) (domain.ConsentOptions, error) {
	var o domain.ConsentOptions
	db := s.conn(ctx)
	if err := db.Raw(`SELECT r.id::text AS id, r.name FROM memberships m JOIN restaurants r ON r.id = m.restaurant_id
		WHERE m.user_id = ? AND m.role = 'owner' ORDER BY r.name, r.id`, userID).Scan(&o.Restaurants).Error; err != nil {
		return o, err
	}
	err := db.Raw(`SELECT o.id::text AS id, o.name, m.role,
			(SELECT count(*) FROM organization_restaurants x WHERE x.organization_id = o.id) AS restaurant_count
		FROM memberships m JOIN organizations o ON o.id = m.organization_id
		WHERE m.user_id = ? AND m.role IN ('admin', 'owner') ORDER BY o.name, o.id`, userID).Scan(&o.Organizations).Error
	return o, err
}

// CreateGrant records an approval and snapshots what it covers, and
// returns its id. The choice is checked against the user's
// memberships inside the transaction. When the user has an active approval
// of the client for the same restaurant, or the same organizations, it is
// extended instead (extendGrant): one authorization per app and boundary.
func (s *Store) CreateGrant(ctx context.Context, g domain.GrantRequest) (string, error) {
	id := uuid.NewString()
	err := s.inTx(ctx, func(ctx context.Context, tx *gorm.DB) error {
		// The client's status under a share lock: a suspension (which
		// takes the row FOR UPDATE, then revokes the client's grants)
		// either commits first and refuses this grant, or waits for it
		// and revokes it too.
		var status string
		if err := tx.Raw(`SELECT status FROM partner_clients WHERE id = ? FOR SHARE`, g.ClientID).Scan(&status).Error; err != nil {
			return err
		}
		if status != string(domain.ClientApproved) {
			return domain.Invalid("client: %s is not approved", g.ClientID)
		}
		existing, err := s.sameApproval(tx, g)
		if err != nil {
			return err
		}
		if existing != "" {
			id = existing
			return s.extendGrant(tx, existing, g)
		}
		if err := tx.Exec(`INSERT INTO grants (id, client_id, user_id, scopes, boundary, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			id, g.ClientID, g.UserID, jsonList(g.Scopes), string(g.Boundary), s.now(), g.ExpiresAt).Error; err != nil {
			return err
		}
		switch g.Boundary {
		case domain.BoundaryRestaurant:
			res := tx.Exec(`INSERT INTO grant_restaurants (grant_id, restaurant_id)
				SELECT ?, m.restaurant_id FROM memberships m WHERE m.user_id = ? AND m.restaurant_id = ? AND m.role = 'owner'`, id, g.UserID, g.RestaurantID)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected != 1 {
				return domain.Invalid("restaurant: choose a restaurant you own")
			}
		case domain.BoundaryOrganization:
			if len(g.OrganizationIDs) == 0 {
				return domain.Invalid("organization: choose at least one organization")
			}
			res := tx.Exec(`INSERT INTO grant_organizations (grant_id, organization_id, role)
				SELECT ?, m.organization_id, m.role FROM memberships m
				WHERE m.user_id = ? AND m.organization_id::text = ANY (?) AND m.role IN ('admin', 'owner')`, id, g.UserID, pgTextArray(g.OrganizationIDs))
			if res.Error != nil {
				return res.Error
			}
			if int(res.RowsAffected) != len(g.OrganizationIDs) {
				return domain.Invalid("organization: choose only organizations you administer")
			}
			if err := tx.Exec(`INSERT INTO grant_restaurants (grant_id, restaurant_id, organization_id)
				SELECT ?, x.restaurant_id, x.organization_id FROM organization_restaurants x
				WHERE x.organization_id::text = ANY (?)`, id, pgTextArray(g.OrganizationIDs)).Error; err != nil {
				return err
			}
		default:
			return domain.Invalid("boundary: must be restaurant or organization")
		}
		return nil
	})
	return id, err
}

// sameApproval finds, under a lock per client and user (so two approvals
// at once make one grant), the user's active grant of the client with the
// same boundary: the same restaurant, or the same organizations (not a
// union of organizations: a grant over more than one organization asks
// the partner for organization_id, which its calls under a one-organization
// grant may not send). "" when there is none.
func (s *Store) sameApproval(tx *gorm.DB, g domain.GrantRequest) (string, error) {
	if err := tx.Exec(`SELECT pg_advisory_xact_lock(hashtext('identity.approval'), hashtext(? || '/' || ?))`, g.ClientID, g.UserID).Error; err != nil {
		return "", err
	}
	var ids []string
	var err error
	switch g.Boundary {
	case domain.BoundaryRestaurant:
		err = tx.Raw(`SELECT g.id::text FROM grants g JOIN grant_restaurants gr ON gr.grant_id = g.id
			WHERE g.client_id = ? AND g.user_id = ? AND g.boundary = 'restaurant' AND g.revoked_at IS NULL AND g.expires_at > ?
				AND gr.restaurant_id::text = ?
			ORDER BY g.created_at DESC LIMIT 1`, g.ClientID, g.UserID, s.now(), g.RestaurantID).Scan(&ids).Error
	case domain.BoundaryOrganization:
		orgs := slices.Sorted(slices.Values(g.OrganizationIDs))
		err = tx.Raw(`SELECT g.id::text FROM grants g
			WHERE g.client_id = ? AND g.user_id = ? AND g.boundary = 'organization' AND g.revoked_at IS NULL AND g.expires_at > ?
				AND (SELECT array_agg(go.organization_id::text ORDER BY go.organization_id::text) FROM grant_organizations go WHERE go.grant_id = g.id) = CAST(? AS text[])
			ORDER BY g.created_at DESC LIMIT 1`, g.ClientID, g.UserID, s.now(), pgTextArray(orgs)).Scan(&ids).Error
	}
	if err != nil || len(ids) == 0 {
		return "", err
	}
	return ids[0], nil
}

// extendGrant is an approval again of what grant id covers: its scopes
// become the union of both approvals', its expiry the later, and an
// organization grant covers its organizations' current restaurants (as
// CoverNewRestaurants), once the user's memberships are checked again.
// Its tokens go on.
func (s *Store) extendGrant(tx *gorm.DB, id string, g domain.GrantRequest) error {
	var memberships int64
	var err error
	switch g.Boundary {
	case domain.BoundaryRestaurant:
		err = tx.Raw(`SELECT count(*) FROM memberships WHERE user_id = ? AND restaurant_id::text = ? AND role = 'owner'`, g.UserID, g.RestaurantID).Scan(&memberships).Error
	case domain.BoundaryOrganization:
		err = tx.Raw(`SELECT count(*) FROM memberships WHERE user_id = ? AND organization_id::text = ANY (?) AND role IN ('admin', 'owner')`,
			g.UserID, pgTextArray(g.OrganizationIDs)).Scan(&memberships).Error
	}
	switch {
	case err != nil:
		return err
	case g.Boundary == domain.BoundaryRestaurant && memberships != 1:
		return domain.Invalid("restaurant: choose a restaurant you own")
	case g.Boundary == domain.BoundaryOrganization && int(memberships) != len(g.OrganizationIDs):
		return domain.Invalid("organization: choose only organizations you administer")
	}
	var rows []struct{ Scopes jsonList }
	if err := tx.Raw(`SELECT scopes FROM grants WHERE id = ? FOR UPDATE`, id).Scan(&rows).Error; err != nil || len(rows) == 0 {
		return err
	}
	scopes := slices.Clone([]string(rows[0].Scopes))
	for _, sc := range g.Scopes {
		if !slices.Contains(scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	if err := tx.Exec(`UPDATE grants SET scopes = ?, expires_at = greatest(expires_at, ?) WHERE id = ?`, jsonList(scopes), g.ExpiresAt, id).Error; err != nil {
		return err
	}
	if g.Boundary == domain.BoundaryOrganization {
		// The same organizations as the grant's (sameApproval).
		_, err = coverCurrentRestaurants(tx, id, g.OrganizationIDs)
	}
	return err
}

type grantRow struct {
	ID           string
	ClientID     string
	UserID       string
	Scopes       jsonList
	Boundary     string
	CreatedAt    time.Time
	ExpiresAt    time.Time
	RevokedAt    *time.Time
	LastUsedAt   *time.Time
	ClientStatus string
	// ClientScopes are the client's allowedScopes now.
	ClientScopes jsonList
}

// domain is the grant as it stands at now. Its scopes are those the owner
// approved that the client is still allowed: an operator who removes a
// scope from a client removes it from every existing grant of the client
// (and giving it back gives it back to them).
func (r grantRow) domain(now time.Time) domain.Grant {
	scopes := slices.DeleteFunc(slices.Clone(r.Scopes), func(s string) bool { return !slices.Contains(r.ClientScopes, s) })
	g := domain.Grant{ID: r.ID, ClientID: r.ClientID, UserID: r.UserID, Scopes: scopes, Boundary: domain.Boundary(r.Boundary), CreatedAt: r.CreatedAt.UTC(), ExpiresAt: r.ExpiresAt.UTC(), RevokedAt: r.RevokedAt, LastUsedAt: r.LastUsedAt}
	g.Status = g.StatusAt(now)
	return g
}

const grantCols = `g.id::text AS id, g.client_id, g.user_id::text AS user_id, g.scopes, g.boundary, g.created_at, g.expires_at, g.revoked_at, g.last_used_at, c.status AS client_status, c.allowed_scopes AS client_scopes`

// Grant returns a grant and its client's status.
func (s *Store) Grant(ctx context.Context, id string) (domain.Grant, string, error) {
	if _, err := uuid.Parse(id); err != nil {
		return domain.Grant{}, "", domain.ErrNotFound
	}
	var r grantRow
	err := s.conn(ctx).Raw(`SELECT `+grantCols+` FROM grants g JOIN partner_clients c ON c.id = g.client_id WHERE g.id = ?`, id).Take(&r).Error
	if err != nil {
		return domain.Grant{}, "", notFound(err)
	}
	return r.domain(s.now()), r.ClientStatus, nil
}

// Grants lists grants by client and/or user, newest first.
func (s *Store) Grants(ctx context.Context, clientID, userID string) ([]domain.Grant, error) {
	q := s.conn(ctx).Table("grants g").Select(grantCols).Joins("JOIN partner_clients c ON c.id = g.client_id")
	if clientID != "" {
		q = q.Where("g.client_id = ?", clientID)
	}
	if userID != "" {
		if _, err := uuid.Parse(userID); err != nil {
			return nil, domain.Invalid("userId: must be a UUID")
		}
		q = q.Where("g.user_id = ?", userID)
	}
	var rows []grantRow
	if err := q.Order("g.created_at DESC, g.id").Limit(1000).Scan(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]domain.Grant, len(rows))
	for i, r := range rows {
		out[i] = r.domain(s.now())
	}
	return out, nil
}

// RecordGrantUse keeps the latest last-use time per grant: one statement
// for the whole batch; an older or repeated time changes nothing.
func (s *Store) RecordGrantUse(ctx context.Context, uses map[string]time.Time) error {
	ids, times := make([]string, 0, len(uses)), make([]time.Time, 0, len(uses))
	for id, at := range uses {
		if _, err := uuid.Parse(id); err == nil {
			ids, times = append(ids, id), append(times, at.UTC())
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return s.conn(ctx).Exec(`UPDATE grants g SET last_used_at = u.at
		FROM unnest(CAST(? AS uuid[]), CAST(? AS timestamptz[])) AS u(id, at)
		WHERE g.id = u.id AND (g.last_used_at IS NULL OR g.last_used_at < u.at)`, pgTextArray(ids), pgTimeArray(times)).Error
}

// RevokeGrant revokes a grant and every token issued under it; by says who
// (contracts.RevokedBy…). The first revocation records, in the same
// transaction, an authorization.revoked event for each restaurant the grant
// covers, so the partner learns it was disconnected; a second one changes
// nothing and records nothing.
func (s *Store) RevokeGrant(ctx context.Context, id, by string) (domain.Grant, error) {
	if _, err := uuid.Parse(id); err != nil {
		return domain.Grant{}, domain.ErrNotFound
	}
	if err := s.inTx(ctx, func(ctx context.Context, tx *gorm.DB) error { return s.revokeGrant(tx, id, by) }); err != nil {
		return domain.Grant{}, err
	}
	g, _, err := s.Grant(ctx, id)
	return g, err
}

// revokeGrant is RevokeGrant inside tx; ErrNotFound for an unknown grant.
func (s *Store) revokeGrant(tx *gorm.DB, id, by string) error {
	now := s.now().UTC()
	var clientIDs []string
	if err := tx.Raw(`UPDATE grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL RETURNING client_id`, now, id).Scan(&clientIDs).Error; err != nil {
		return err
	}
	if err := tx.Exec(`UPDATE oauth_tokens SET active = false WHERE grant_id = ? AND active`, id).Error; err != nil {
		return err
	}
	if len(clientIDs) == 0 {
		// Unknown, or revoked before: its events were recorded then.
		var n int64
		if err := tx.Raw(`SELECT count(*) FROM grants WHERE id = ?`, id).Scan(&n).Error; err != nil || n > 0 {
			return err
		}
		return domain.ErrNotFound
	}
	// The restaurants it covers now, as Coverage counts them.
	var restaurants []string
	if err := tx.Raw(`SELECT DISTINCT gr.restaurant_id::text FROM grant_restaurants gr
		WHERE gr.grant_id = ? AND (gr.organization_id IS NULL OR EXISTS (SELECT 1 FROM organization_restaurants x
			WHERE x.organization_id = gr.organization_id AND x.restaurant_id = gr.restaurant_id)) ORDER BY 1`, id).Scan(&restaurants).Error; err != nil {
		return err
	}
	data := contracts.AuthorizationRevoked{AuthorizationID: id, ClientID: clientIDs[0], RevokedAt: now, RevokedBy: by}
	events := make([]outbox.Event, len(restaurants))
	for i, r := range restaurants {
		events[i] = outbox.Event{Type: contracts.EventAuthorizationRevoked, RestaurantID: r, Data: data}
	}
	return outbox.Record(tx, events...)
}
