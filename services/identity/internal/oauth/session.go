package oauth

import (
	"maps"
	"time"

	"github.com/ory/fosite"
)

// Session is what fosite keeps with every code and token: the authorizing
// user, the grant the owner approved, and expiry times.
type Session struct {
	Subject   string                         `json:"sub"`
	GrantID   string                         `json:"gid"`
	ExpiresAt map[fosite.TokenType]time.Time `json:"exp"`
}

// NewSession returns an empty session.
func NewSession() *Session { return &Session{ExpiresAt: map[fosite.TokenType]time.Time{}} }

// SetExpiresAt implements fosite.Session.
func (s *Session) SetExpiresAt(key fosite.TokenType, exp time.Time) {
	if s.ExpiresAt == nil {
		s.ExpiresAt = map[fosite.TokenType]time.Time{}
	}
	s.ExpiresAt[key] = exp
}

// GetExpiresAt implements fosite.Session.
func (s *Session) GetExpiresAt(key fosite.TokenType) time.Time { return s.ExpiresAt[key] }

// GetUsername implements fosite.Session.
func (s *Session) GetUsername() string { return "" }

// GetSubject implements fosite.Session.
func (s *Session) GetSubject() string { return s.Subject }

// GetGrantID tells the store which grant a token belongs to.
func (s *Session) GetGrantID() string { return s.GrantID }

// Clone implements fosite.Session.
func (s *Session) Clone() fosite.Session {
	if s == nil {
		return nil
	}
	c := *s
	c.ExpiresAt = maps.Clone(s.ExpiresAt)
	return &c
}
