package server_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/services/identity/internal/flow"
)

// grantRevocations reads what the gateway learns about revoked tokens.
type grantRevocations struct {
	Families []string `json:"revokedTokenFamilies"`
	IDs      []string `json:"revokedTokenIds"`
}

func (e *env) revocations(t *testing.T, gid string) grantRevocations {
	t.Helper()
	var g grantRevocations
	if st := e.partner(t, "/internal/v1/grants/"+gid, gid, &g); st != http.StatusOK {
		t.Fatalf("grant view: %d", st)
	}
	if g.Families == nil || g.IDs == nil {
		t.Fatalf("grant view lacks revokedTokenFamilies or revokedTokenIds: %+v", g)
	}
	return g
}

// refused tells whether the grant view lists the access token, by its
// family or its own id, as the gateway checks it.
func (g grantRevocations) refused(claims accessClaims) bool {
	fid, jti := claims.FID, claims.JTI
	return fid != "" && slices.Contains(g.Families, fid) || jti != "" && slices.Contains(g.IDs, jti)
}

func (e *env) revoke(t *testing.T, o flow.Options, token, hint string) {
	t.Helper()
	form := url.Values{"token": {token}}
	if hint != "" {
		form.Set("token_type_hint", hint)
	}
	if o.ClientSecret == "" {
		form.Set("client_id", o.ClientID)
	}
	req, _ := http.NewRequest(http.MethodPost, e.base+"/oauth2/revoke", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if o.ClientSecret != "" {
		req.SetBasicAuth(o.ClientID, o.ClientSecret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %d", resp.StatusCode)
	}
}

func TestRevokedAccessTokensAreListedForTheGateway(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	type issued struct {
		claims accessClaims
		gid    string
	}
	claimsOf := func(t *testing.T, tok *flow.Token) issued {
		c := jwtClaims(t, tok.AccessToken)
		if c.JTI == "" || c.FID == "" {
			t.Fatalf("access token lacks jti or fid: %+v", c)
		}
		return issued{claims: c, gid: grantID(t, tok.AccessToken)}
	}
	// Each case returns the access tokens it expects refused afterwards.
	cases := map[string]func(t *testing.T, o flow.Options) []issued{
		"authorization code reused": func(t *testing.T, o flow.Options) []issued {
			res, tok := e.approve(t, o)
			a := claimsOf(t, tok)
			if _, err := flow.Exchange(ctx, o, res); err == nil {
				t.Fatal("reused code accepted")
			}
			return []issued{a}
		},
		"refresh token reused": func(t *testing.T, o flow.Options) []issued {
			_, tok := e.approve(t, o)
			tok2, err := flow.Refresh(ctx, o, tok.RefreshToken, "")
			if err != nil {
				t.Fatal(err)
			}
			a, b := claimsOf(t, tok), claimsOf(t, tok2)
			if a.claims.FID != b.claims.FID || a.claims.JTI == b.claims.JTI {
				t.Fatalf("a refresh keeps the family and changes the jti: %+v %+v", a.claims, b.claims)
			}
			// A plain rotation does not end the newest access token.
			if e.revocations(t, b.gid).refused(b.claims) {
				t.Fatal("rotation listed the new access token as revoked")
			}
			if _, err := flow.Refresh(ctx, o, tok.RefreshToken, ""); err == nil {
				t.Fatal("reused refresh token accepted")
			}
			return []issued{a, b}
		},
		"refresh token revoked": func(t *testing.T, o flow.Options) []issued {
			_, tok := e.approve(t, o)
			e.revoke(t, o, tok.RefreshToken, "refresh_token")
			return []issued{claimsOf(t, tok)}
		},
		"access token revoked": func(t *testing.T, o flow.Options) []issued {
			_, tok := e.approve(t, o)
			e.revoke(t, o, tok.AccessToken, "access_token")
			return []issued{claimsOf(t, tok)}
		},
		"access token revoked without a hint": func(t *testing.T, o flow.Options) []issued {
			_, tok := e.approve(t, o)
			e.revoke(t, o, tok.AccessToken, "")
			return []issued{claimsOf(t, tok)}
		},
		"access token revoked after a refresh superseded it": func(t *testing.T, o flow.Options) []issued {
			_, tok := e.approve(t, o)
			tok2, err := flow.Refresh(ctx, o, tok.RefreshToken, "")
			if err != nil {
				t.Fatal(err)
			}
			e.revoke(t, o, tok.AccessToken, "access_token")
			b := claimsOf(t, tok2)
			// Only the superseded token was revoked; the newest one goes on.
			if e.revocations(t, b.gid).refused(b.claims) {
				t.Fatal("revoking a superseded access token ended the newest one")
			}
			return []issued{claimsOf(t, tok)}
		},
	}
	for name, run := range cases {
		for _, client := range []string{"demo-partner", "conf-partner"} {
			t.Run(name+" "+client, func(t *testing.T) {
				o := e.opts(client)
				o.Restaurant = restA
				tokens := run(t, o)
				for _, a := range tokens {
					if !e.revocations(t, a.gid).refused(a.claims) {
						t.Errorf("access token %v is not listed as revoked", a.claims.JTI)
					}
				}
			})
		}
	}

	t.Run("another client cannot revoke a token", func(t *testing.T) {
		o := e.opts("demo-partner")
		o.Restaurant = restA
		_, tok := e.approve(t, o)
		e.revoke(t, e.opts("conf-partner"), tok.AccessToken, "access_token")
		a := claimsOf(t, tok)
		if e.revocations(t, a.gid).refused(a.claims) {
			t.Fatal("another client's revocation was recorded")
		}
	})

	t.Run("entries end with the tokens they name and are purged", func(t *testing.T) {
		o := e.opts("demo-partner")
		o.Restaurant = restA
		_, tok := e.approve(t, o)
		e.revoke(t, o, tok.RefreshToken, "refresh_token")
		a := claimsOf(t, tok)
		if !e.revocations(t, a.gid).refused(a.claims) {
			t.Fatal("not listed")
		}
		st := e.parts.Store
		st.SetClock(func() time.Time { return time.Now().Add(e.cfg.AccessTokenTTL + 2*time.Minute) })
		defer st.SetClock(time.Now)
		if e.revocations(t, a.gid).refused(a.claims) {
			t.Fatal("listed after every token it names expired")
		}
		var n int
		if _, err := st.PurgeExpired(ctx); err != nil {
			t.Fatal(err)
		}
		if err := e.db.Gorm.Raw(`SELECT count(*) FROM token_revocations WHERE value IN (?, ?)`, a.claims.FID, a.claims.JTI).Scan(&n).Error; err != nil || n != 0 {
			t.Fatalf("purge left %d rows (%v)", n, err)
		}
	})
}
