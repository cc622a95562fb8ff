package server_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

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
