package server_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/identity/internal/flow"
)

// Concurrency tests: requests that read and change the same state released
// together, round after round, checked against what the answers promised.
// RACE_ROUNDS=<n> runs longer.

// TestCodeIsExchangedOnceUnderConcurrency: an authorization code presented
// by several token requests at once gives tokens to one of them; the others
// are refused (invalid_grant), and a refusal as a reuse revokes what the
// code issued, as a later reuse does.
func TestCodeIsExchangedOnceUnderConcurrency(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	for round := range testenv.Rounds(t, 8) {
		o := e.opts("conf-partner")
		res, err := flow.Authorize(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		const n = 4
		toks := make([]*flow.Token, n)
		errs := make([]error, n)
		fns := make([]func(), n)
		for i := range fns {
			fns[i] = func() { toks[i], errs[i] = flow.Exchange(ctx, o, res) }
		}
		testenv.Together(fns...)
		var won []*flow.Token
		reused := false
		for i, err := range errs {
			var te *flow.TokenError
			switch {
			case err == nil:
				won = append(won, toks[i])
			case errors.As(err, &te) && te.Status == http.StatusBadRequest && te.Code == "invalid_grant":
				// Refused either as a reuse of the code or, before that,
				// because the winner had already taken the PKCE record.
				reused = reused || strings.Contains(te.Description, "already been used")
			default:
				t.Fatalf("round %d: exchange %d: %v", round, i, err)
			}
		}
		if len(won) != 1 {
			t.Fatalf("round %d: %d of %d concurrent exchanges of one code got tokens, want 1", round, len(won), n)
		}
		// A refusal as a reuse revokes what the code issued.
		if _, err := flow.Refresh(ctx, o, won[0].RefreshToken, ""); reused && err == nil {
			t.Fatalf("round %d: the refresh token issued from a reused code still works", round)
		}
	}
}

// TestRevocationRacingRefresh: a refresh and a revocation of its family, at
// once: at /oauth2/revoke by the client, or of the whole grant by the
// owner. The refresh gets tokens or a 400 (invalid_grant, or invalid_request
// when the revocation deactivated its token while it was rotating it),
// never a server error, and the revocation answers 200 (no deadlock).
// Once the family is listed as revoked no refresh
// token of it works: the revocation came first or it also revoked the token
// the refresh issued. (A revocation at /oauth2/revoke that finds the token
// already rotated revokes nothing, as it does one after the other.)
func TestRevocationRacingRefresh(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	o := e.opts("conf-partner")
	for _, c := range []struct {
		name   string
		revoke func(t *testing.T, tok *flow.Token, gid string)
	}{
		{"the family at /oauth2/revoke", func(t *testing.T, tok *flow.Token, _ string) { e.revoke(t, o, tok.RefreshToken, "refresh_token") }},
		{"the grant", func(t *testing.T, _ *flow.Token, gid string) {
			if st := e.admin(t, http.MethodPost, "/admin/v1/grants/"+gid+"/revoke", nil, nil); st != http.StatusOK {
				t.Errorf("grant revocation answered %d", st)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for round := range testenv.Rounds(t, 40) {
				_, tok := e.approve(t, o)
				claims := jwtClaims(t, tok.AccessToken)
				gid := grantID(t, tok.AccessToken)
				var next *flow.Token
				var refreshErr error
				testenv.Together(
					func() { next, refreshErr = flow.Refresh(ctx, o, tok.RefreshToken, "") },
					func() { c.revoke(t, tok, gid) },
				)
				if refreshErr != nil {
					var te *flow.TokenError
					if !errors.As(refreshErr, &te) || te.Status != http.StatusBadRequest {
						t.Fatalf("round %d: refresh racing the revocation: %v", round, refreshErr)
					}
					continue
				}
				if c.name == "the family at /oauth2/revoke" && !e.revocations(t, gid).refused(claims) {
					continue // the revocation found the token already rotated
				}
				if _, err := flow.Refresh(ctx, o, next.RefreshToken, ""); err == nil {
					t.Fatalf("round %d: the family is revoked and the refresh token a concurrent refresh issued still works", round)
				}
			}
		})
	}
}

// signInForm opens the sign-in page in a browser session of its own.
func (e *env) signInForm(t *testing.T) (*http.Client, string, url.Values) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	v := flow.NewVerifier()
	q := url.Values{"response_type": {"code"}, "client_id": {"demo-partner"}, "redirect_uri": {callbackURI},
		"code_challenge": {flow.S256(v)}, "code_challenge_method": {"S256"}}
	resp, err := hc.Get(e.base + "/oauth2/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	f, err := flow.ParseForm(body)
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{}
	for k, v := range f.Hidden {
		form.Set(k, v)
	}
	return hc, e.base + f.Action, form
}

// TestSignInThrottleCountsConcurrentAttempts: wrong passwords for one email
// sent at once, from separate browser sessions, get at most
// MaxSignInFailures (5) password checks within the window, the others 429;
// wrong passwords sent one after another then get exactly the checks left,
// and the right password is refused once the window is full.
func TestSignInThrottleCountsConcurrentAttempts(t *testing.T) {
	t.Parallel()
	for round := range testenv.Rounds(t, 3) {
		e := newEnv(t)
		attempt := func(password string) func() int {
			hc, action, form := e.signInForm(t)
			form.Set("email", ownerEmail)
			form.Set("password", password)
			return func() int {
				resp, err := hc.PostForm(action, form)
				if err != nil {
					t.Error(err)
					return 0
				}
				resp.Body.Close()
				return resp.StatusCode
			}
		}
		const n = 16
		statuses := make([]int, n)
		fns := make([]func(), n)
		for i := range fns {
			post := attempt("wrong password " + strconv.Itoa(i))
			fns[i] = func() { statuses[i] = post() }
		}
		testenv.Together(fns...)
		checked := 0
		for _, st := range statuses {
			switch st {
			case http.StatusUnauthorized:
				checked++
			case http.StatusTooManyRequests:
			default:
				t.Fatalf("round %d: sign-in answered %d", round, st)
			}
		}
		if checked > 5 {
			t.Fatalf("round %d: %d of %d concurrent wrong passwords were checked, want at most 5 (answers %v)", round, checked, n, statuses)
		}
		for checked < 6 {
			st := attempt("wrong again")()
			if st == http.StatusTooManyRequests {
				break
			}
			if st != http.StatusUnauthorized {
				t.Fatalf("round %d: sign-in answered %d", round, st)
			}
			checked++
		}
		if checked != 5 {
			t.Fatalf("round %d: %d wrong passwords checked in the window, want 5", round, checked)
		}
		if st := attempt(ownerPW)(); st != http.StatusTooManyRequests {
			t.Fatalf("round %d: the right password after 5 failures: %d, want 429", round, st)
		}
	}
}
