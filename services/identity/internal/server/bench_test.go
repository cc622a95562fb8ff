package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/identity/internal/flow"
)

// BenchmarkTokenEndpoint measures POST /oauth2/token over HTTP against real
// Postgres: a refresh with rotation (read family, rotate, sign an ES256 JWT,
// store two rows) per iteration, for a public and a confidential client.
func BenchmarkTokenEndpoint(b *testing.B) {
	e := newEnv(b)
	ctx := context.Background()
	for _, client := range []string{"demo-partner", "conf-partner"} {
		b.Run("refresh/"+client, func(b *testing.B) {
			o := e.opts(client)
			_, tok := e.approve(b, o)
			refresh := tok.RefreshToken
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t, err := flow.Refresh(ctx, o, refresh, "")
				if err != nil {
					b.Fatal(err)
				}
				refresh = t.RefreshToken
			}
		})
	}
	b.Run("code/demo-partner", func(b *testing.B) {
		o := e.opts("demo-partner")
		results := make([]*flow.Result, b.N)
		for i := range results {
			r, err := flow.Authorize(ctx, o)
			if err != nil {
				b.Fatal(err)
			}
			results[i] = r
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := flow.Exchange(ctx, o, results[i]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkInternalGrant measures the gateway's grant lookup.
func BenchmarkInternalGrant(b *testing.B) {
	e := newEnv(b)
	o := e.opts("demo-partner")
	o.Scope = "svc.restaurant.read svc.organization.read"
	o.Organizations = []string{orgNorth, orgSouth}
	_, tok := e.approve(b, o)
	gid := grantID(b, tok.AccessToken)
	u, _ := url.Parse(e.base + "/internal/v1/grants/" + gid)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req, _ := http.NewRequest(http.MethodGet, u.String(), nil)
		req.Header.Set(internalctx.Header, e.ring.Sign(internalctx.Context{GrantID: gid}))
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatal(err, resp.StatusCode)
		}
		resp.Body.Close()
	}
	_ = strings.TrimSpace
}

// BenchmarkSessionLookup measures what a server-side session costs each
// page: the one statement that finds the session and moves its idle expiry
// (store), and a whole signed-in page that lists nothing beside a
// signed-out sign-in page, over HTTP against real Postgres.
func BenchmarkSessionLookup(b *testing.B) {
	e := newEnv(b)
	ctx := context.Background()
	hash := strings.Repeat("ab", 32)
	if err := e.parts.Store.StartSession(ctx, hash, userOther, time.Hour, 2*time.Hour); err != nil {
		b.Fatal(err)
	}
	b.Run("store", func(b *testing.B) {
		for b.Loop() {
			if _, err := e.parts.Store.TouchSession(ctx, hash, time.Hour); err != nil {
				b.Fatal(err)
			}
		}
	})
	page := func(b *testing.B, c *http.Client, want string) {
		for b.Loop() {
			resp, err := c.Get(e.base + "/account")
			if err != nil {
				b.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(body), want) {
				b.Fatalf("page: %d %s", resp.StatusCode, body)
			}
		}
	}
	b.Run("page/signed-in", func(b *testing.B) {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar}
		resp, err := c.Get(e.base + "/account")
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		f, err := flow.ParseForm(body)
		if err != nil {
			b.Fatal(err)
		}
		form := url.Values{"email": {otherEmail}, "password": {ownerPW}}
		for k, v := range f.Hidden {
			form.Set(k, v)
		}
		if resp, err = c.PostForm(e.base+f.Action, form); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		page(b, c, "<h1>Connected apps</h1>")
	})
	b.Run("page/signed-out", func(b *testing.B) {
		jar, _ := cookiejar.New(nil)
		page(b, &http.Client{Jar: jar}, "Sign in to see your connected apps")
	})
}
