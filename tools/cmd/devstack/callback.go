package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"partnerapi.dev/tools/seed"
)

// browserFlow lets a person try the real consent flow: it prints an authorize
// URL with a fresh PKCE challenge and answers the demo client's redirect URI,
// exchanging the code for tokens like any OAuth 2.1 client would.
type browserFlow struct {
	baseURL, redirectURI, state, verifier, scope string
	srv                                          *http.Server
}

func newBrowserFlow(baseURL, redirectURI string) *browserFlow {
	return &browserFlow{baseURL: baseURL, redirectURI: redirectURI, state: randomToken(16), verifier: randomToken(32),
		scope: "svc.restaurant.read svc.organization.read svc.orders.read"}
}

func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// AuthorizeURL is the address to open in a browser.
func (f *browserFlow) AuthorizeURL() string {
	sum := sha256.Sum256([]byte(f.verifier))
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {seed.DemoClientID},
		"redirect_uri":          {f.redirectURI},
		"scope":                 {f.scope},
		"state":                 {f.state},
		"code_challenge":        {base64.RawURLEncoding.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"},
	}
	return f.baseURL + "/oauth2/authorize?" + q.Encode()
}

// Start listens on the demo redirect URI's address; when the port is taken the
// flow is simply not offered.
func (f *browserFlow) Start() error {
	u, _ := url.Parse(f.redirectURI)
	ln, err := net.Listen("tcp", u.Host)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc(u.Path, f.callback)
	f.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = f.srv.Serve(ln) }()
	return nil
}

// Stop closes the listener.
func (f *browserFlow) Stop() {
	if f.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = f.srv.Shutdown(ctx)
	}
}

var callbackPage = template.Must(template.New("cb").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Demo partner callback</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:3rem auto;padding:0 1rem}
code,pre{background:#f4f4f4;padding:.2rem .4rem;border-radius:4px;word-break:break-all;white-space:pre-wrap}</style></head>
<body><h1>{{.Title}}</h1>{{if .Error}}<p>{{.Error}}</p>{{else}}
<p>The demo partner received an authorization code and exchanged it (with its PKCE verifier) for tokens.</p>
<p>Scopes granted: <code>{{.Scope}}</code></p>
<p>Access token (expires in {{.ExpiresIn}} s):</p><pre>{{.AccessToken}}</pre>
<p>Try it:</p><pre>curl -s -H "Authorization: Bearer {{.AccessToken}}" {{.BaseURL}}/v1/restaurants</pre>{{end}}
</body></html>`))

func (f *browserFlow) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	page := map[string]any{"BaseURL": f.baseURL}
	switch {
	case q.Get("state") != f.state:
		page["Title"], page["Error"] = "Unexpected state", "This callback does not belong to the authorize URL printed by make run. Open that URL again."
	case q.Get("error") != "":
		page["Title"], page["Error"] = "Not approved", fmt.Sprintf("The authorization server answered %s %s.", q.Get("error"), q.Get("error_description"))
	default:
		tok, err := f.exchange(r.Context(), q.Get("code"))
		if err != nil {
			page["Title"], page["Error"] = "Code exchange failed", err.Error()
			break
		}
		page["Title"] = "Approved"
		for k, v := range tok {
			page[k] = v
		}
		logf("browser flow: approved, access token issued for scopes %q", tok["Scope"])
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = callbackPage.Execute(w, page)
}

func (f *browserFlow) exchange(ctx context.Context, code string) (map[string]any, error) {
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {f.redirectURI},
		"client_id":     {seed.DemoClientID},
		"code_verifier": {f.verifier},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.baseURL+"/oauth2/token", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	var body struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
		Scope       string `json:"scope"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, fmt.Errorf("token endpoint answered %s", resp.Status)
	}
	if resp.StatusCode != http.StatusOK || body.AccessToken == "" {
		return nil, errors.New(strings.TrimSpace(body.Error + " " + body.Description))
	}
	return map[string]any{"AccessToken": body.AccessToken, "ExpiresIn": body.ExpiresIn, "Scope": body.Scope}, nil
}
