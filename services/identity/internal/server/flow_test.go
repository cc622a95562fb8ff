package server_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/identity/internal/flow"
)

func TestFlowCodeTokenRefreshRotation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	o := e.opts("demo-partner")
	o.Scope = "svc.restaurant.read svc.orders.read"
	o.State = "state-0123456789"
	o.Restaurant = restA
	res, tok := e.approve(t, o)
	if res.State != o.State {
		t.Fatalf("state not echoed: %q", res.State)
	}
	if tok.RefreshToken == "" || tok.AccessToken == "" || tok.ExpiresIn < 800 || tok.ExpiresIn > 900 {
		t.Fatalf("token answer: %+v", tok)
	}
	c := jwtClaims(t, tok.AccessToken)
	if c.Subject != userOwner || c.ClientID != "demo-partner" || c.Scope != "svc.restaurant.read svc.orders.read" || c.Audience != e.base+"/v1" || c.Issuer != e.base || c.GID == "" {
		t.Fatalf("claims: %+v", c)
	}

	// Refresh rotates: a new refresh token, the old one now revokes the family.
	tok2, err := flow.Refresh(ctx, o, tok.RefreshToken, "")
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	if tok2.RefreshToken == tok.RefreshToken || tok2.AccessToken == tok.AccessToken {
		t.Fatal("refresh did not rotate")
	}
	if jwtClaims(t, tok2.AccessToken).GID != c.GID {
		t.Fatal("refresh changed the grant")
	}
	_, err = flow.Refresh(ctx, o, tok.RefreshToken, "")
	var te *flow.TokenError
	if !errors.As(err, &te) || te.Code != "invalid_grant" {
		t.Fatalf("reuse of rotated refresh token: %v", err)
	}
	// The whole family is revoked: the newest refresh token fails too.
	if _, err := flow.Refresh(ctx, o, tok2.RefreshToken, ""); !errors.As(err, &te) || te.Code != "invalid_grant" {
		t.Fatalf("family not revoked: %v", err)
	}
	if e.introspect(t, tok2.AccessToken) {
		t.Fatal("newest access token of a revoked family is still active")
	}
}

func TestFlowRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()

	t.Run("missing PKCE", func(t *testing.T) {
		o := e.opts("demo-partner")
		o.NoPKCE = true
		_, err := flow.Authorize(ctx, o)
		assertRefused(t, err, "invalid_request")
	})
	t.Run("plain PKCE", func(t *testing.T) {
		o := e.opts("demo-partner")
		o.Challenge, o.ChallengeMethod = o.Verifier+"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG", "plain"
		_, err := flow.Authorize(ctx, o)
		assertRefused(t, err, "invalid_request")
	})
	t.Run("wrong verifier", func(t *testing.T) {
		o := e.opts("demo-partner")
		res, err := flow.Authorize(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		res.Verifier = flow.NewVerifier()
		_, err = flow.Exchange(ctx, o, res)
		assertTokenError(t, err, "invalid_grant")
	})
	t.Run("redirect URI mismatch", func(t *testing.T) {
		for _, uri := range []string{"http://127.0.0.1:8976/other", "http://127.0.0.1:8977/callback", "http://127.0.0.1:8976/callback?x=1"} {
			o := e.opts("demo-partner")
			o.RedirectURI = uri
			_, err := flow.Authorize(ctx, o)
			var pe *flow.PageError
			if !errors.As(err, &pe) || pe.Status != http.StatusBadRequest {
				t.Fatalf("%s: %v", uri, err)
			}
		}
	})
	t.Run("redirect URI differs at the token endpoint", func(t *testing.T) {
		o := e.opts("demo-partner")
		res, err := flow.Authorize(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		o.RedirectURI = "http://127.0.0.1:8976/elsewhere"
		_, err = flow.Exchange(ctx, o, res)
		assertTokenError(t, err, "invalid_grant")
	})
	t.Run("code reused revokes its tokens", func(t *testing.T) {
		o := e.opts("conf-partner")
		res, tok := e.approve(t, o)
		if !e.introspect(t, tok.AccessToken) {
			t.Fatal("fresh access token inactive")
		}
		_, err := flow.Exchange(ctx, o, res)
		assertTokenError(t, err, "invalid_grant")
		if _, err := flow.Refresh(ctx, o, tok.RefreshToken, ""); err == nil {
			t.Fatal("refresh token from a reused code still works")
		}
		if e.introspect(t, tok.AccessToken) {
			t.Fatal("access token from a reused code still active")
		}
	})
	for _, client := range []string{"suspended-partner", "pending-partner", "unknown-partner"} {
		t.Run("client "+client+" cannot start", func(t *testing.T) {
			_, err := flow.Authorize(ctx, e.opts(client))
			var pe *flow.PageError
			if !errors.As(err, &pe) || pe.Status != http.StatusBadRequest {
				t.Fatalf("%v", err)
			}
		})
	}
	t.Run("suspended client cannot exchange or refresh", func(t *testing.T) {
		o := e.opts("conf-partner")
		res, err := flow.Authorize(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		o2 := e.opts("conf-partner")
		_, tok := e.approve(t, o2)
		if st := e.admin(t, http.MethodPost, "/admin/v1/clients/conf-partner/suspend", nil, nil); st != http.StatusOK {
			t.Fatalf("suspend: %d", st)
		}
		_, err = flow.Exchange(ctx, o, res)
		assertTokenError(t, err, "invalid_client")
		_, err = flow.Refresh(ctx, o, tok.RefreshToken, "")
		assertTokenError(t, err, "invalid_client")
		e.admin(t, http.MethodPost, "/admin/v1/clients/conf-partner/approve", nil, nil)
		if _, err := flow.Refresh(ctx, o, tok.RefreshToken, ""); err != nil {
			t.Fatalf("after re-approval: %v", err)
		}
	})
	t.Run("scope escalation on refresh", func(t *testing.T) {
		o := e.opts("demo-partner")
		o.Scope = "svc.restaurant.read"
		_, tok := e.approve(t, o)
		_, err := flow.Refresh(ctx, o, tok.RefreshToken, "svc.restaurant.read svc.orders.read")
		assertTokenError(t, err, "invalid_scope")
		if _, err := flow.Refresh(ctx, o, tok.RefreshToken, "svc.restaurant.read"); err != nil {
			t.Fatalf("same scope refresh: %v", err)
		}
	})
	t.Run("scope the client may not ask for", func(t *testing.T) {
		o := e.opts("demo-partner")
		o.Scope = "svc.menu.publish.write"
		_, err := flow.Authorize(ctx, o)
		assertRefused(t, err, "invalid_scope")
	})
	t.Run("revoked grant cannot refresh", func(t *testing.T) {
		o := e.opts("demo-partner")
		_, tok := e.approve(t, o)
		gid := grantID(t, tok.AccessToken)
		if st := e.admin(t, http.MethodPost, "/admin/v1/grants/"+gid+"/revoke", nil, nil); st != http.StatusOK {
			t.Fatalf("revoke: %d", st)
		}
		_, err := flow.Refresh(ctx, o, tok.RefreshToken, "")
		assertTokenError(t, err, "invalid_grant")
		var g contracts.Grant
		e.partner(t, "/internal/v1/grants/"+gid, gid, &g)
		if g.Status != "revoked" {
			t.Fatalf("internal grant status: %q", g.Status)
		}
	})
	t.Run("expired grant cannot refresh", func(t *testing.T) {
		o := e.opts("demo-partner")
		_, tok := e.approve(t, o)
		gid := grantID(t, tok.AccessToken)
		if err := e.db.Gorm.Exec(`UPDATE grants SET expires_at = now() - interval '1 second' WHERE id = ?`, gid).Error; err != nil {
			t.Fatal(err)
		}
		_, err := flow.Refresh(ctx, o, tok.RefreshToken, "")
		assertTokenError(t, err, "invalid_grant")
		var g contracts.Grant
		e.partner(t, "/internal/v1/grants/"+gid, gid, &g)
		if g.Status != "expired" {
			t.Fatalf("internal grant status: %q", g.Status)
		}
	})
	t.Run("deny", func(t *testing.T) {
		o := e.opts("demo-partner")
		o.Deny, o.State = true, "deny-state-123456"
		res, err := flow.Authorize(ctx, o)
		if err == nil || res == nil || res.Callback.Query().Get("error") != "access_denied" || res.State != o.State {
			t.Fatalf("deny: %v %+v", err, res)
		}
	})
	t.Run("wrong password and throttling", func(t *testing.T) {
		for i := 0; i < 5; i++ {
			o := e.opts("demo-partner")
			o.Email, o.Password = otherEmail, "wrong-password"
			_, err := flow.Authorize(ctx, o)
			var pe *flow.PageError
			if !errors.As(err, &pe) || pe.Status != http.StatusUnauthorized {
				t.Fatalf("attempt %d: %v", i, err)
			}
		}
		o := e.opts("demo-partner")
		o.Email = otherEmail // right password now, but throttled
		_, err := flow.Authorize(ctx, o)
		var pe *flow.PageError
		if !errors.As(err, &pe) || pe.Status != http.StatusTooManyRequests {
			t.Fatalf("throttle: %v", err)
		}
	})
}

func assertRefused(t *testing.T, err error, code string) {
	t.Helper()
	if err == nil {
		t.Fatal("flow succeeded")
	}
	if want := "authorization refused: " + code; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
		t.Fatalf("want %s, got %v", code, err)
	}
}

func assertTokenError(t *testing.T, err error, code string) {
	t.Helper()
	var te *flow.TokenError
	if !errors.As(err, &te) || te.Code != code {
		t.Fatalf("want token error %s, got %v", code, err)
	}
}
