package store

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"time"

	"github.com/ory/fosite"
	"gorm.io/gorm"

	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/identity/internal/domain"
)

// Fosite storage. Every authorization code, PKCE session, access token and
// refresh token is one oauth_tokens row keyed by (kind, signature); the
// signature is fosite's HMAC of the token, so no usable token is stored.

const (
	kindCode    = "code"
	kindPKCE    = "pkce"
	kindAccess  = "access"
	kindRefresh = "refresh"
)

// GrantIDer is implemented by the service's fosite session.
type GrantIDer interface{ GetGrantID() string }

// storedRequest is a fosite request as persisted in oauth_tokens.data.
type storedRequest struct {
	ID                string          `json:"id"`
	RequestedAt       time.Time       `json:"requestedAt"`
	ClientID          string          `json:"clientId"`
	RequestedScope    []string        `json:"requestedScope"`
	GrantedScope      []string        `json:"grantedScope"`
	Form              url.Values      `json:"form"`
	Session           json.RawMessage `json:"session"`
	RequestedAudience []string        `json:"requestedAudience"`
	GrantedAudience   []string        `json:"grantedAudience"`
}

// secretFormKeys never reach the database.
var secretFormKeys = []string{"password", "client_secret", "csrf_token", "code_verifier", "refresh_token", "code", "email"}

// FositeClient converts a partner client for fosite.
func FositeClient(c domain.PartnerClient) fosite.Client {
	fc := &fosite.DefaultClient{
		ID:            c.ClientID,
		RedirectURIs:  c.RedirectURIs,
		GrantTypes:    []string{"authorization_code", "refresh_token"},
		ResponseTypes: []string{"code"},
		Scopes:        c.AllowedScopes,
		Public:        c.Type == domain.ClientPublic,
	}
	if c.SecretHash != "" {
		fc.Secret = []byte(c.SecretHash)
	}
	if c.PreviousSecretHash != "" {
		fc.RotatedSecrets = [][]byte{[]byte(c.PreviousSecretHash)}
	}
	return fc
}

// GetClient implements fosite.ClientManager: only approved clients exist for
// fosite, so a pending or suspended client can neither start a flow,
// exchange a code nor refresh.
func (s *Store) GetClient(ctx context.Context, id string) (fosite.Client, error) {
	c, err := s.Client(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, fosite.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if c.Status != domain.ClientApproved {
		return nil, fosite.ErrInvalidClient.WithHint("The partner client is not approved or is suspended.")
	}
	return FositeClient(c), nil
}

// ClientAssertionJWTValid implements fosite.ClientManager (assertions are not
// accepted, so no JTI is ever known).
func (s *Store) ClientAssertionJWTValid(context.Context, string) error { return nil }

// SetClientAssertionJWT implements fosite.ClientManager.
func (s *Store) SetClientAssertionJWT(context.Context, string, time.Time) error { return nil }

// BeginTX implements fosite's storage.Transactional.
func (s *Store) BeginTX(ctx context.Context) (context.Context, error) {
	tx := s.db.WithContext(ctx).Begin()
	if tx.Error != nil {
		return ctx, tx.Error
	}
	return context.WithValue(ctx, txKey{}, tx), nil
}

// Commit implements fosite's storage.Transactional.
func (s *Store) Commit(ctx context.Context) error {
	tx, ok := ctx.Value(txKey{}).(*gorm.DB)
	if !ok {
		return errors.New("commit without a transaction")
	}
	return tx.Commit().Error
}

// Rollback implements fosite's storage.Transactional.
func (s *Store) Rollback(ctx context.Context) error {
	tx, ok := ctx.Value(txKey{}).(*gorm.DB)
	if !ok {
		return errors.New("rollback without a transaction")
	}
	return tx.Rollback().Error
}

func (s *Store) create(ctx context.Context, kind, signature, accessSignature string, r fosite.Requester, expiresAt time.Time) error {
	sess, err := json.Marshal(r.GetSession())
	if err != nil {
		return err
	}
	form := url.Values{}
	for k, v := range r.GetRequestForm() {
		form[k] = v
	}
	for _, k := range secretFormKeys {
		delete(form, k)
	}
	data, err := json.Marshal(storedRequest{
		ID: r.GetID(), RequestedAt: r.GetRequestedAt(), ClientID: r.GetClient().GetID(),
		RequestedScope: r.GetRequestedScopes(), GrantedScope: r.GetGrantedScopes(), Form: form, Session: sess,
		RequestedAudience: r.GetRequestedAudience(), GrantedAudience: r.GetGrantedAudience(),
	})
	if err != nil {
		return err
	}
	var grantID *string
	if g, ok := r.GetSession().(GrantIDer); ok && g.GetGrantID() != "" {
		id := g.GetGrantID()
		grantID = &id
	}
	var exp *time.Time
	if !expiresAt.IsZero() {
		exp = &expiresAt
	}
	var access *string
	if accessSignature != "" {
		access = &accessSignature
	}
	return s.conn(ctx).Exec(`INSERT INTO oauth_tokens (kind, signature, request_id, client_id, grant_id, access_signature, expires_at, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		kind, signature, r.GetID(), r.GetClient().GetID(), grantID, access, exp, string(data)).Error
}

type tokenRow struct {
	Active bool
	Data   []byte
}

// get loads a request; it returns the request together with
// fosite.ErrInactiveToken for an inactive row, as fosite expects.
func (s *Store) get(ctx context.Context, kind, signature string, session fosite.Session) (fosite.Requester, bool, error) {
	var row tokenRow
	err := s.conn(ctx).Raw(`SELECT active, data FROM oauth_tokens WHERE kind = ? AND signature = ?`, kind, signature).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, false, fosite.ErrNotFound
	}
	if err != nil {
		return nil, false, err
	}
	var sr storedRequest
	if err := json.Unmarshal(row.Data, &sr); err != nil {
		return nil, false, err
	}
	if session == nil && s.NewSession != nil {
		session, _ = s.NewSession().(fosite.Session)
	}
	if session != nil && len(sr.Session) > 0 {
		if err := json.Unmarshal(sr.Session, session); err != nil {
			return nil, false, err
		}
	}
	c, err := s.Client(ctx, sr.ClientID)
	if err != nil {
		return nil, false, err
	}
	req := &fosite.Request{
		ID: sr.ID, RequestedAt: sr.RequestedAt, Client: FositeClient(c),
		RequestedScope: sr.RequestedScope, GrantedScope: sr.GrantedScope, Form: sr.Form, Session: session,
		RequestedAudience: sr.RequestedAudience, GrantedAudience: sr.GrantedAudience,
	}
	return req, row.Active, nil
}

func (s *Store) deactivate(ctx context.Context, kind, signature string) error {
	return s.conn(ctx).Exec(`UPDATE oauth_tokens SET active = false WHERE kind = ? AND signature = ?`, kind, signature).Error
}

func (s *Store) remove(ctx context.Context, kind, signature string) error {
	return s.conn(ctx).Exec(`DELETE FROM oauth_tokens WHERE kind = ? AND signature = ?`, kind, signature).Error
}

// CreateAuthorizeCodeSession implements oauth2.AuthorizeCodeStorage.
func (s *Store) CreateAuthorizeCodeSession(ctx context.Context, code string, r fosite.Requester) error {
	return s.create(ctx, kindCode, code, "", r, r.GetSession().GetExpiresAt(fosite.AuthorizeCode))
}

// GetAuthorizeCodeSession implements oauth2.AuthorizeCodeStorage.
func (s *Store) GetAuthorizeCodeSession(ctx context.Context, code string, session fosite.Session) (fosite.Requester, error) {
	r, active, err := s.get(ctx, kindCode, code, session)
	if err != nil {
		return nil, err
	}
	if !active {
		return r, fosite.ErrInvalidatedAuthorizeCode
	}
	return r, nil
}

// ErrCodeUsed means another exchange of the authorization code committed
// first.
var ErrCodeUsed = errors.New("the authorization code was exchanged concurrently")

// InvalidateAuthorizeCodeSession implements oauth2.AuthorizeCodeStorage,
// inside the exchange's transaction. fosite read the code as active before
// that transaction began, so only this conditional update decides: a
// concurrent exchange of the same code waits for the first one's row lock
// and then finds the code used (ErrCodeUsed).
func (s *Store) InvalidateAuthorizeCodeSession(ctx context.Context, code string) error {
	res := s.conn(ctx).Exec(`UPDATE oauth_tokens SET active = false WHERE kind = ? AND signature = ? AND active`, kindCode, code)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrCodeUsed
	}
	return nil
}

// CreatePKCERequestSession implements pkce.PKCERequestStorage.
func (s *Store) CreatePKCERequestSession(ctx context.Context, signature string, r fosite.Requester) error {
	return s.create(ctx, kindPKCE, signature, "", r, r.GetSession().GetExpiresAt(fosite.AuthorizeCode))
}

// GetPKCERequestSession implements pkce.PKCERequestStorage.
func (s *Store) GetPKCERequestSession(ctx context.Context, signature string, session fosite.Session) (fosite.Requester, error) {
	r, _, err := s.get(ctx, kindPKCE, signature, session)
	return r, err
}

// DeletePKCERequestSession implements pkce.PKCERequestStorage.
func (s *Store) DeletePKCERequestSession(ctx context.Context, signature string) error {
	return s.remove(ctx, kindPKCE, signature)
}

// CreateAccessTokenSession implements oauth2.AccessTokenStorage.
func (s *Store) CreateAccessTokenSession(ctx context.Context, signature string, r fosite.Requester) error {
	return s.create(ctx, kindAccess, signature, "", r, r.GetSession().GetExpiresAt(fosite.AccessToken))
}

// GetAccessTokenSession implements oauth2.AccessTokenStorage. A revoked
// access token is not found.
func (s *Store) GetAccessTokenSession(ctx context.Context, signature string, session fosite.Session) (fosite.Requester, error) {
	r, active, err := s.get(ctx, kindAccess, signature, session)
	if err != nil {
		return nil, err
	}
	if !active {
		return nil, fosite.ErrNotFound
	}
	return r, nil
}

// DeleteAccessTokenSession implements oauth2.AccessTokenStorage.
func (s *Store) DeleteAccessTokenSession(ctx context.Context, signature string) error {
	return s.remove(ctx, kindAccess, signature)
}

// CreateRefreshTokenSession implements oauth2.RefreshTokenStorage.
func (s *Store) CreateRefreshTokenSession(ctx context.Context, signature, accessSignature string, r fosite.Requester) error {
	return s.create(ctx, kindRefresh, signature, accessSignature, r, r.GetSession().GetExpiresAt(fosite.RefreshToken))
}

// GetRefreshTokenSession implements oauth2.RefreshTokenStorage; a rotated or
// revoked token answers fosite.ErrInactiveToken with its request, which
// makes fosite revoke the whole family.
func (s *Store) GetRefreshTokenSession(ctx context.Context, signature string, session fosite.Session) (fosite.Requester, error) {
	r, active, err := s.get(ctx, kindRefresh, signature, session)
	if err != nil {
		return nil, err
	}
	if !active {
		return r, fosite.ErrInactiveToken
	}
	return r, nil
}

// DeleteRefreshTokenSession implements oauth2.RefreshTokenStorage. The row is
// kept inactive rather than deleted, so a later reuse is still recognised.
func (s *Store) DeleteRefreshTokenSession(ctx context.Context, signature string) error {
	return s.deactivate(ctx, kindRefresh, signature)
}

// lockFamily takes the token family's lock until the transaction ends. A
// refresh holds it from rotating its token until the new one is committed,
// and a revocation while it revokes the family's refresh tokens, in a
// statement after the lock: so the revocation also reaches the token a
// concurrent refresh issued, and a refresh after it finds its token revoked.
func lockFamily(tx *gorm.DB, requestID string) error {
	return tx.Exec(`SELECT pg_advisory_xact_lock(hashtext('identity.token_family'), hashtext(?))`, requestID).Error
}

// RotateRefreshToken implements oauth2.RefreshTokenStorage: the presented
// refresh token and the family's access tokens stop working. Only one
// concurrent refresh with the same token wins.
//
// It first takes a share lock on the token's grant row, which a grant's
// revocation updates before it deactivates the grant's tokens: the two then
// run one after the other instead of locking token rows in opposite orders
// (a deadlock), and the revocation, coming second, also reaches the tokens
// this refresh issues.
func (s *Store) RotateRefreshToken(ctx context.Context, requestID, signature string) error {
	if err := s.conn(ctx).Exec(`SELECT 1 FROM grants WHERE id = (SELECT grant_id FROM oauth_tokens WHERE kind = 'refresh' AND signature = ?) FOR SHARE`, signature).Error; err != nil {
		return err
	}
	if err := lockFamily(s.conn(ctx), requestID); err != nil {
		return err
	}
	res := s.conn(ctx).Exec(`UPDATE oauth_tokens SET active = false WHERE kind = 'refresh' AND signature = ? AND active`, signature)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return fosite.ErrSerializationFailure
	}
	return s.deactivateAccess(ctx, requestID)
}

// RevokeRefreshToken implements oauth2.TokenRevocationStorage for the whole
// token family. Tokens already rotated stay marked as used.
func (s *Store) RevokeRefreshToken(ctx context.Context, requestID string) error {
	return s.inTx(ctx, func(_ context.Context, tx *gorm.DB) error {
		if err := lockFamily(tx, requestID); err != nil {
			return err
		}
		return tx.Exec(`UPDATE oauth_tokens SET active = false, revoked = true WHERE request_id = ? AND kind = 'refresh' AND active`, requestID).Error
	})
}

// RevokeGrantOfRefreshToken revokes the grant of the refresh token with
// this signature issued to clientID (nothing when there is none).
func (s *Store) RevokeGrantOfRefreshToken(ctx context.Context, signature, clientID string) error {
	return s.inTx(ctx, func(ctx context.Context, tx *gorm.DB) error {
		var grants []string
		if err := tx.Raw(`SELECT grant_id::text FROM oauth_tokens WHERE kind = 'refresh' AND signature = ? AND client_id = ? AND grant_id IS NOT NULL`,
			signature, clientID).Scan(&grants).Error; err != nil || len(grants) == 0 {
			return err
		}
		return s.revokeGrant(tx, grants[0], contracts.RevokedByPartner)
	})
}

// RefreshTokenRevoked reports whether the refresh token with this signature
// was revoked rather than used, and the client it was issued to.
func (s *Store) RefreshTokenRevoked(ctx context.Context, signature string) (clientID string, revoked bool, err error) {
	var row struct {
		ClientID string
		Revoked  bool
	}
	err = s.conn(ctx).Raw(`SELECT client_id, revoked FROM oauth_tokens WHERE kind = 'refresh' AND signature = ?`, signature).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", false, nil
	}
	return row.ClientID, row.Revoked, err
}

// RevokeRefreshTokenMaybeGracePeriod revokes without grace period.
func (s *Store) RevokeRefreshTokenMaybeGracePeriod(ctx context.Context, requestID, _ string) error {
	return s.RevokeRefreshToken(ctx, requestID)
}

// RevokeAccessToken implements oauth2.TokenRevocationStorage for the family.
// fosite calls it for a reused code, a reused refresh token and
// POST /oauth2/revoke. The family is also recorded for the gateway, which
// verifies access tokens without asking identity.
func (s *Store) RevokeAccessToken(ctx context.Context, requestID string) error {
	if err := s.deactivateAccess(ctx, requestID); err != nil {
		return err
	}
	now := s.now()
	return s.conn(ctx).Exec(`INSERT INTO token_revocations (grant_id, kind, value, valid_until)
		SELECT grant_id, 'family', request_id, max(expires_at) + make_interval(secs => ?)
		FROM oauth_tokens WHERE request_id = ? AND kind = 'access' AND grant_id IS NOT NULL AND expires_at > ?
		GROUP BY grant_id, request_id
		ON CONFLICT (grant_id, kind, value) DO UPDATE SET valid_until = greatest(token_revocations.valid_until, excluded.valid_until)`,
		RevocationMargin.Seconds(), requestID, now.Add(-RevocationMargin)).Error
}

// deactivateAccess ends the family's access tokens for introspection only:
// a rotation supersedes them, but those already handed out keep working at
// the gateway until they expire.
func (s *Store) deactivateAccess(ctx context.Context, requestID string) error {
	return s.conn(ctx).Exec(`UPDATE oauth_tokens SET active = false WHERE request_id = ? AND kind = 'access' AND active`, requestID).Error
}

// RevocationMargin keeps a revocation listed past the expiry of the last
// token it names, covering the gateway's clock leeway on exp.
const RevocationMargin = time.Minute

// RevokeAccessTokenID records one revoked access token (its jti) that
// expires at exp.
func (s *Store) RevokeAccessTokenID(ctx context.Context, grantID, jti string, exp time.Time) error {
	until := exp.Add(RevocationMargin)
	if !until.After(s.now()) {
		return nil
	}
	return s.conn(ctx).Exec(`INSERT INTO token_revocations (grant_id, kind, value, valid_until) VALUES (?, 'jti', ?, ?)
		ON CONFLICT (grant_id, kind, value) DO UPDATE SET valid_until = greatest(token_revocations.valid_until, excluded.valid_until)`,
		grantID, jti, until).Error
}

// Revocations lists a grant's revoked token families and access token ids
// that may still name an unexpired token.
func (s *Store) Revocations(ctx context.Context, grantID string) (families, ids []string, err error) {
	var rows []struct{ Kind, Value string }
	err = s.conn(ctx).Raw(`SELECT kind, value FROM token_revocations WHERE grant_id = ? AND valid_until > ? ORDER BY created_at, value`, grantID, s.now()).Scan(&rows).Error
	families, ids = []string{}, []string{}
	for _, r := range rows {
		if r.Kind == "family" {
			families = append(families, r.Value)
		} else {
			ids = append(ids, r.Value)
		}
	}
	return families, ids, err
}

// FamilyActive reports whether any token of a family is still active (tests
// and the admin view).
func (s *Store) FamilyActive(ctx context.Context, requestID string) (bool, error) {
	var n int
	err := s.conn(ctx).Raw(`SELECT count(*) FROM oauth_tokens WHERE request_id = ? AND kind IN ('access', 'refresh') AND active`, requestID).Scan(&n).Error
	return n > 0, err
}

// PurgeExpired deletes token rows that expired more than a day ago, and
// revocations, consent requests, sign-in failures and browser sessions that
// can no longer matter.
func (s *Store) PurgeExpired(ctx context.Context) (int64, error) {
	now := s.now()
	var n int64
	for _, q := range []struct {
		sql string
		at  time.Time
	}{
		{`DELETE FROM oauth_tokens WHERE expires_at < ?`, now.Add(-24 * time.Hour)},
		{`DELETE FROM token_revocations WHERE valid_until < ?`, now},
		{`DELETE FROM consent_requests WHERE expires_at < ?`, now},
		{`DELETE FROM sign_in_failures WHERE failed_at < ?`, now.Add(-24 * time.Hour)},
		{`DELETE FROM browser_sessions WHERE idle_expires_at < ?`, now},
		{`DELETE FROM grant_changes WHERE changed_at < ?`, now.Add(-time.Hour)},
	} {
		res := s.conn(ctx).Exec(q.sql, q.at)
		if res.Error != nil {
			return n, res.Error
		}
		n += res.RowsAffected
	}
	return n, nil
}
