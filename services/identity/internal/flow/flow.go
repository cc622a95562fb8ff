// Package flow drives the authorization code + PKCE flow the way a browser
// does: it reads the sign-in and consent pages, posts their forms with the
// CSRF token, stops at the redirect to the partner's callback, and exchanges
// the code. partnerctl and the tests use it.
package flow

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/html"
)

// Options describe one run of the flow.
type Options struct {
	BaseURL      string
	Email        string
	Password     string
	ClientID     string
	ClientSecret string
	RedirectURI  string
	Scope        string
	State        string
	// Restaurant or Organizations choose what to approve; neither means the
	// first option on the consent page.
	Restaurant    string
	Organizations []string
	Deny          bool
	// Challenge and ChallengeMethod override PKCE (tests of refusals).
	Verifier, Challenge, ChallengeMethod string
	NoPKCE                               bool
	HTTP                                 *http.Client
}

// Result is where the flow landed.
type Result struct {
	Callback *url.URL
	Code     string
	State    string
	Verifier string
}

// Token is the token endpoint's answer.
type Token struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	Scope        string `json:"scope"`
	ExpiresAt    string `json:"expires_at,omitempty"`
}

// PageError is a refusal shown on a page (bad password, throttling).
type PageError struct {
	Status  int
	Message string
}

func (e *PageError) Error() string { return fmt.Sprintf("page answered %d: %s", e.Status, e.Message) }

// NewVerifier returns a random PKCE verifier.
func NewVerifier() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// S256 is the PKCE challenge of a verifier.
func S256(v string) string {
	h := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// Authorize runs the pages until the redirect to RedirectURI.
func Authorize(ctx context.Context, o Options) (*Result, error) {
	res := &Result{Verifier: o.Verifier}
	if res.Verifier == "" {
		res.Verifier = NewVerifier()
	}
	state := o.State
	if state == "" {
		state = NewVerifier()[:16]
	}
	q := url.Values{"response_type": {"code"}, "client_id": {o.ClientID}, "redirect_uri": {o.RedirectURI}, "state": {state}}
	if o.Scope != "" {
		q.Set("scope", o.Scope)
	}
	if !o.NoPKCE {
		q.Set("code_challenge", S256(res.Verifier))
		q.Set("code_challenge_method", "S256")
		if o.Challenge != "" {
			q.Set("code_challenge", o.Challenge)
		}
		if o.ChallengeMethod != "" {
			q.Set("code_challenge_method", o.ChallengeMethod)
		}
	}
	cb, err := Follow(ctx, o, strings.TrimRight(o.BaseURL, "/")+"/oauth2/authorize?"+q.Encode())
	if err != nil {
		return nil, err
	}
	res.Callback, res.Code, res.State = cb, cb.Query().Get("code"), cb.Query().Get("state")
	if e := cb.Query().Get("error"); e != "" {
		return res, fmt.Errorf("authorization refused: %s: %s", e, cb.Query().Get("error_description"))
	}
	return res, nil
}

// Follow plays the owner's browser from an authorization URL, which a
// partner's OAuth library may have built: it signs in, answers the consent
// page, and returns the address the browser is sent back to (RedirectURI,
// or else the URL's redirect_uri), carrying a code or an error.
func Follow(ctx context.Context, o Options, authorizeURL string) (*url.URL, error) {
	hc := o.HTTP
	if hc == nil {
		jar, _ := cookiejar.New(nil)
		hc = &http.Client{Jar: jar, Timeout: 30 * time.Second}
	}
	client := *hc
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if client.Jar == nil {
		client.Jar, _ = cookiejar.New(nil)
	}
	back := o.RedirectURI
	if back == "" {
		u, err := url.Parse(authorizeURL)
		if err != nil {
			return nil, err
		}
		back = u.Query().Get("redirect_uri")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authorizeURL, nil)
	if err != nil {
		return nil, err
	}
	signedIn := false
	for step := 0; step < 8; step++ {
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
			u, err := resp.Request.URL.Parse(loc)
			if err != nil {
				return nil, err
			}
			if back != "" && strings.HasPrefix(u.String(), back) {
				return u, nil
			}
			req, _ = http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
			continue
		}
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			return nil, fmt.Errorf("unexpected answer %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
		}
		f, err := ParseForm(body)
		if err != nil {
			return nil, &PageError{Status: resp.StatusCode, Message: f.Error}
		}
		if f.Error != "" && (resp.StatusCode >= 400) && (f.Kind() != "signin" || signedIn) {
			return nil, &PageError{Status: resp.StatusCode, Message: f.Error}
		}
		vals := url.Values{}
		for k, v := range f.Hidden {
			vals.Set(k, v)
		}
		switch f.Kind() {
		case "signin":
			if signedIn && f.Error != "" {
				return nil, &PageError{Status: resp.StatusCode, Message: f.Error}
			}
			if signedIn {
				return nil, &PageError{Status: resp.StatusCode, Message: f.Error}
			}
			signedIn = true
			vals.Set("email", o.Email)
			vals.Set("password", o.Password)
		case "consent":
			if o.Deny {
				vals.Set("decision", "deny")
			} else {
				vals.Set("decision", "approve")
				switch {
				case o.Restaurant != "":
					vals.Set("restaurant", o.Restaurant)
				case len(o.Organizations) > 0:
					vals["organization"] = o.Organizations
				case len(f.Choices) > 0:
					vals.Set(f.Choices[0].Name, f.Choices[0].Value)
				}
			}
		default:
			return nil, &PageError{Status: resp.StatusCode, Message: "unexpected page: " + f.Error}
		}
		action, err := resp.Request.URL.Parse(f.Action)
		if err != nil {
			return nil, err
		}
		req, _ = http.NewRequestWithContext(ctx, http.MethodPost, action.String(), strings.NewReader(vals.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return nil, errors.New("the flow did not reach the redirect URI")
}

// Exchange trades a code for tokens at /oauth2/token.
func Exchange(ctx context.Context, o Options, r *Result) (*Token, error) {
	return TokenRequest(ctx, o, url.Values{
		"grant_type": {"authorization_code"}, "code": {r.Code}, "redirect_uri": {o.RedirectURI}, "code_verifier": {r.Verifier},
	})
}

// Refresh uses a refresh token.
func Refresh(ctx context.Context, o Options, refresh, scope string) (*Token, error) {
	v := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}
	if scope != "" {
		v.Set("scope", scope)
	}
	return TokenRequest(ctx, o, v)
}

// TokenError is an RFC 6749 error answer.
type TokenError struct {
	Status      int
	Code        string `json:"error"`
	Description string `json:"error_description"`
}

func (e *TokenError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Description) }

// TokenRequest posts form to the token endpoint with the client's credentials.
func TokenRequest(ctx context.Context, o Options, form url.Values) (*Token, error) {
	if o.ClientSecret == "" {
		form.Set("client_id", o.ClientID)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(o.BaseURL, "/")+"/oauth2/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if o.ClientSecret != "" {
		req.SetBasicAuth(url.QueryEscape(o.ClientID), url.QueryEscape(o.ClientSecret))
	}
	hc := o.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		te := &TokenError{Status: resp.StatusCode}
		_ = json.Unmarshal(body, te)
		return nil, te
	}
	var t Token
	if err := json.Unmarshal(body, &t); err != nil {
		return nil, err
	}
	t.ExpiresAt = time.Now().Add(time.Duration(t.ExpiresIn) * time.Second).UTC().Format(time.RFC3339)
	return &t, nil
}

// Choice is a radio or checkbox on the consent page.
type Choice struct {
	Type, Name, Value, Label string
}

// Form is the interesting part of a page.
type Form struct {
	Action  string
	Hidden  map[string]string
	Choices []Choice
	Error   string
}

// Kind is "signin" or "consent".
func (f *Form) Kind() string { return f.Hidden["action"] }

// ParseForm reads the first form of a page and its error message.
func ParseForm(page []byte) (*Form, error) {
	doc, err := html.Parse(strings.NewReader(string(page)))
	if err != nil {
		return &Form{}, err
	}
	f := &Form{Hidden: map[string]string{}}
	labels := map[string]string{}
	var inForm bool
	var walk func(n *html.Node, inside bool)
	walk = func(n *html.Node, inside bool) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "form":
				if !inForm {
					inForm, inside = true, true
					f.Action = attr(n, "action")
				}
			case "input":
				if inside {
					switch attr(n, "type") {
					case "hidden":
						f.Hidden[attr(n, "name")] = attr(n, "value")
					case "radio", "checkbox":
						f.Choices = append(f.Choices, Choice{Type: attr(n, "type"), Name: attr(n, "name"), Value: attr(n, "value"), Label: attr(n, "id")})
					}
				}
			case "label":
				labels[attr(n, "for")] = strings.Join(strings.Fields(text(n)), " ")
			case "p":
				if strings.Contains(" "+attr(n, "class")+" ", " error ") && f.Error == "" {
					f.Error = strings.TrimSpace(text(n))
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inside)
		}
	}
	walk(doc, false)
	for i, c := range f.Choices {
		f.Choices[i].Label = labels[c.Label]
	}
	if f.Action == "" {
		return f, errors.New("no form on the page")
	}
	return f, nil
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func text(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(text(c))
	}
	return b.String()
}
