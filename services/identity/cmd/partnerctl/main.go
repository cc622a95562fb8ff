// Command partnerctl is the operator's tool for the identity service: it
// registers and approves partner clients, creates users, organizations and
// restaurants, lists and revokes grants, rotates signing keys, and runs the
// real authorization code + PKCE flow to print a demo token.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"partnerapi.dev/services/identity/internal/flow"
)

const usage = `partnerctl talks to the identity service's admin API.

Usage:
  partnerctl clients register --client-id ID --name NAME [--type public|confidential] --redirect-uri URI... --scope SCOPE... [--approve]
  partnerctl clients approve|suspend CLIENT_ID
  partnerctl clients list [--json]
  partnerctl users create --email EMAIL --name NAME --password PW [--id UUID]
  partnerctl organizations create --name NAME --registered-name NAME --business-id ID [--id UUID]
  partnerctl restaurants create --name NAME --time-zone TZ --day-start-hour H --currency EUR --country FI --registered-name NAME --business-id ID [--org UUID...] [--id UUID]
  partnerctl memberships create --user UUID (--restaurant UUID | --org UUID) --role owner|admin
  partnerctl grants list [--client-id ID] [--user-id UUID] [--json]
  partnerctl organizations list [--json]
  partnerctl restaurants list [--json]
  partnerctl users list [--json]
  partnerctl users sign-out USER_ID
      (ends every session of the user on the sign-in, consent and connected-apps pages, on
      every device; their next page asks them to sign in)
  partnerctl memberships list [--json]
  partnerctl grants revoke GRANT_ID
  partnerctl apps list (--user-id UUID | --restaurant-id UUID) [--json]
      (the connected apps a user sees on their page, or every app covering a restaurant; revoke
      one with grants revoke)
  partnerctl keys rotate
  partnerctl token --base-url URL --email EMAIL --password PW --client-id ID [--client-secret S] [--redirect-uri URI] [--scope "a b"] [--restaurant UUID | --organization UUID...] [--json]
  partnerctl authorize --url AUTHORIZATION_URL --email EMAIL --password PW [--restaurant UUID | --organization UUID...] [--deny]
      (signs in and answers the consent page for an authorization URL a partner's OAuth
      library built, and prints the redirect back to the partner, with its code or error)

Flags may come before or after the ids. Each resource has one noun, as in the list above
(orgs is kept as another spelling of organizations).

Every admin command takes --url, identity's internal listener where the admin API is
(default $IDENTITY_ADMIN_URL, then http://127.0.0.1:9081), and --admin-token (default $ADMIN_TOKEN).
With $PORT_OFFSET set, as for make run, every default port (9081, 8080, 8976) moves by it.
List commands print an aligned table, or with --json the JSON array; they
follow the admin API's pages to the end.
`

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

type adminClient struct {
	base, token string
	out         io.Writer
}

func adminFlags(fs *flag.FlagSet) *adminClient {
	a := &adminClient{}
	fs.StringVar(&a.base, "url", envOr("IDENTITY_ADMIN_URL", local(9081)), "base URL of identity's internal listener (INTERNAL_HTTP_ADDR), where the admin API is")
	secretVar(fs, &a.token, "admin-token", "ADMIN_TOKEN", "operator token")
	return a
}

// secretVar defines a flag whose default comes from the environment
// variable env and is never printed (in help or in a flag error).
func secretVar(fs *flag.FlagSet, p *string, name, env, usage string) {
	*p = os.Getenv(env)
	fs.Var(secretValue{p}, name, usage+" (default $"+env+")")
}

// secretValue is a string flag that shows no value.
type secretValue struct{ p *string }

func (s secretValue) String() string { return "" }

func (s secretValue) Set(v string) error {
	*s.p = v
	return nil
}

// local is a loopback base URL of a make run stack: port moved by
// $PORT_OFFSET, as make run moves every port.
func local(port int) string {
	offset, _ := strconv.Atoi(os.Getenv("PORT_OFFSET"))
	return fmt.Sprintf("http://127.0.0.1:%d", port+offset)
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

// do sends a request and returns the answer's data.
func (a *adminClient) do(ctx context.Context, method, path string, body any) (json.RawMessage, error) {
	b, err := a.send(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	var wrapped struct {
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(b, &wrapped) == nil && wrapped.Data != nil {
		return wrapped.Data, nil
	}
	return b, nil
}

// listAll reads every page of an admin list, following nextCursor.
func (a *adminClient) listAll(ctx context.Context, path string) (json.RawMessage, error) {
	rows := []json.RawMessage{}
	q := url.Values{"limit": {"200"}}
	for {
		b, err := a.send(ctx, http.MethodGet, path+"?"+q.Encode(), nil)
		if err != nil {
			return nil, err
		}
		var page struct {
			Data       []json.RawMessage `json:"data"`
			NextCursor *string           `json:"nextCursor"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			return nil, fmt.Errorf("GET %s: %w", path, err)
		}
		rows = append(rows, page.Data...)
		if page.NextCursor == nil {
			return json.Marshal(rows)
		}
		q.Set("cursor", *page.NextCursor)
	}
}

// table prints rows (decoded from data into T) under headers, aligned.
func table[T any](out io.Writer, data json.RawMessage, headers string, row func(T) []string) error {
	var rows []T
	if err := json.Unmarshal(data, &rows); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, headers)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(row(r), "\t"))
	}
	return tw.Flush()
}

// send sends a request and returns the answer's body, or the error
// envelope as an error.
func (a *adminClient) send(ctx context.Context, method, path string, body any) ([]byte, error) {
	if a.token == "" {
		return nil, errors.New("set --admin-token or ADMIN_TOKEN")
	}
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(a.base, "/")+path, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		var env struct {
			Error            string `json:"error"`
			Message          string `json:"message"`
			ErrorDescription string `json:"error_description"`
		}
		_ = json.Unmarshal(b, &env)
		msg := env.Message
		if msg == "" {
			msg = env.ErrorDescription
		}
		return nil, fmt.Errorf("%s %s: %d %s: %s", method, path, resp.StatusCode, env.Error, msg)
	}
	return b, nil
}

func (a *adminClient) print(data json.RawMessage) error {
	var v any
	_ = json.Unmarshal(data, &v)
	enc := json.NewEncoder(a.out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printOr prints data as JSON, or returns err.
func (a *adminClient) printOr(data json.RawMessage, err error) error {
	if err != nil {
		return err
	}
	return a.print(data)
}

func orDash(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

// aliases are older spellings of a noun, kept working.
var aliases = map[string]string{"orgs": "organizations"}

// parse parses args with fs, flags anywhere among the positional arguments
// (the flag package stops at the first positional one), and returns the
// positional ones in order. After "--" everything is positional.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) < 1 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(out, usage)
		return nil
	}
	if noun, ok := aliases[args[0]]; ok {
		args = append([]string{noun}, args[1:]...)
	}
	if args[0] == "token" {
		return token(ctx, args[1:], out)
	}
	if args[0] == "authorize" {
		return authorize(ctx, args[1:], out)
	}
	if len(args) < 2 {
		return fmt.Errorf("%s needs a subcommand\n\n%s", args[0], usage)
	}
	cmd := args[0] + " " + args[1]
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	a := adminFlags(fs)
	a.out = out
	var (
		id, name, typ, email, password, regName, businessID, tz, currency, country, user, restaurant, org, role, clientID, userID string
		dayStart                                                                                                                  int
		redirects, scopes, orgs                                                                                                   list
		approve, asJSON                                                                                                           bool
	)
	if strings.HasSuffix(cmd, " list") {
		fs.BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	}
	switch cmd {
	case "clients register":
		fs.StringVar(&id, "client-id", "", "client id")
		fs.StringVar(&name, "name", "", "partner name shown on the consent page")
		fs.StringVar(&typ, "type", "public", "public or confidential")
		fs.Var(&redirects, "redirect-uri", "exact redirect URI (repeat)")
		fs.Var(&scopes, "scope", "allowed scope (repeat, or space separated)")
		fs.BoolVar(&approve, "approve", false, "approve at once")
	case "users create":
		fs.StringVar(&id, "id", "", "user id (default: generated)")
		fs.StringVar(&email, "email", "", "email")
		fs.StringVar(&name, "name", "", "name")
		fs.StringVar(&password, "password", "", "password")
	case "organizations create":
		fs.StringVar(&id, "id", "", "organization id (default: generated)")
		fs.StringVar(&name, "name", "", "name")
		fs.StringVar(&regName, "registered-name", "", "registered name")
		fs.StringVar(&businessID, "business-id", "", "business id")
	case "restaurants create":
		fs.StringVar(&id, "id", "", "restaurant id (default: generated)")
		fs.StringVar(&name, "name", "", "name")
		fs.StringVar(&tz, "time-zone", "", "IANA time zone")
		fs.IntVar(&dayStart, "day-start-hour", 0, "hour the business day starts (0-23)")
		fs.StringVar(&currency, "currency", "EUR", "ISO 4217 currency")
		fs.StringVar(&country, "country", "", "ISO 3166-1 alpha-2 country")
		fs.StringVar(&regName, "registered-name", "", "registered name")
		fs.StringVar(&businessID, "business-id", "", "business id")
		fs.Var(&orgs, "org", "organization id (repeat)")
	case "memberships create":
		fs.StringVar(&user, "user", "", "user id")
		fs.StringVar(&restaurant, "restaurant", "", "restaurant id")
		fs.StringVar(&org, "org", "", "organization id")
		fs.StringVar(&role, "role", "owner", "owner or admin")
	case "grants list":
		fs.StringVar(&clientID, "client-id", "", "filter by client")
		fs.StringVar(&userID, "user-id", "", "filter by user")
	case "apps list":
		fs.StringVar(&userID, "user-id", "", "a user: what their connected-apps page shows")
		fs.StringVar(&restaurant, "restaurant-id", "", "a restaurant: every app covering it")
	}
	pos, err := parse(fs, args[2:])
	if err != nil {
		return err
	}
	one := func() (string, error) {
		if len(pos) != 1 {
			return "", fmt.Errorf("%s needs exactly one id", cmd)
		}
		return url.PathEscape(pos[0]), nil
	}
	switch cmd {
	case "clients register":
		var sc []string
		for _, s := range scopes {
			sc = append(sc, strings.Fields(s)...)
		}
		status := "pending"
		if approve {
			status = "approved"
		}
		d, err := a.do(ctx, http.MethodPost, "/admin/v1/clients", map[string]any{"clientId": id, "name": name, "type": typ, "redirectUris": []string(redirects), "allowedScopes": sc, "status": status})
		if err != nil {
			return err
		}
		return a.print(d)
	case "clients approve", "clients suspend":
		cid, err := one()
		if err != nil {
			return err
		}
		d, err := a.do(ctx, http.MethodPost, "/admin/v1/clients/"+cid+"/"+args[1], nil)
		if err != nil {
			return err
		}
		return a.print(d)
	case "clients list":
		d, err := a.do(ctx, http.MethodGet, "/admin/v1/clients", nil)
		if err != nil || asJSON {
			return a.printOr(d, err)
		}
		type client struct {
			ClientID, Name, Type, Status string
			RedirectURIs                 []string `json:"redirectUris"`
			AllowedScopes                []string
		}
		return table(out, d, "CLIENT ID\tNAME\tTYPE\tSTATUS\tREDIRECT URIS\tSCOPES", func(c client) []string {
			return []string{c.ClientID, c.Name, c.Type, c.Status, strings.Join(c.RedirectURIs, " "), strings.Join(c.AllowedScopes, " ")}
		})
	case "organizations list":
		d, err := a.listAll(ctx, "/admin/v1/organizations")
		if err != nil || asJSON {
			return a.printOr(d, err)
		}
		type org struct{ OrganizationID, Name, RegisteredName, BusinessID string }
		return table(out, d, "ORGANIZATION ID\tNAME\tREGISTERED NAME\tBUSINESS ID", func(o org) []string {
			return []string{o.OrganizationID, o.Name, o.RegisteredName, o.BusinessID}
		})
	case "restaurants list":
		d, err := a.listAll(ctx, "/admin/v1/restaurants")
		if err != nil || asJSON {
			return a.printOr(d, err)
		}
		type restaurant struct {
			RestaurantID, Name, TimeZone, Currency, Country string
			DayStartHour                                    int
			OrganizationIDs                                 []string
		}
		return table(out, d, "RESTAURANT ID\tNAME\tTIME ZONE\tDAY START\tCURRENCY\tCOUNTRY\tORGANIZATIONS", func(r restaurant) []string {
			return []string{r.RestaurantID, r.Name, r.TimeZone, fmt.Sprintf("%02d:00", r.DayStartHour), r.Currency, r.Country, strings.Join(r.OrganizationIDs, " ")}
		})
	case "users list":
		d, err := a.listAll(ctx, "/admin/v1/users")
		if err != nil || asJSON {
			return a.printOr(d, err)
		}
		type user struct{ UserID, Email, Name string }
		return table(out, d, "USER ID\tEMAIL\tNAME", func(u user) []string { return []string{u.UserID, u.Email, u.Name} })
	case "memberships list":
		d, err := a.listAll(ctx, "/admin/v1/memberships")
		if err != nil || asJSON {
			return a.printOr(d, err)
		}
		type membership struct {
			UserID, Role                 string
			RestaurantID, OrganizationID *string
		}
		return table(out, d, "USER ID\tROLE\tRESTAURANT\tORGANIZATION", func(m membership) []string {
			return []string{m.UserID, m.Role, orDash(m.RestaurantID), orDash(m.OrganizationID)}
		})
	case "users create":
		d, err := a.do(ctx, http.MethodPost, "/admin/v1/users", map[string]any{"userId": id, "email": email, "name": name, "password": password})
		if err != nil {
			return err
		}
		return a.print(d)
	case "organizations create":
		d, err := a.do(ctx, http.MethodPost, "/admin/v1/organizations", map[string]any{"organizationId": id, "name": name, "registeredName": regName, "businessId": businessID})
		if err != nil {
			return err
		}
		return a.print(d)
	case "restaurants create":
		if orgs == nil {
			orgs = list{}
		}
		d, err := a.do(ctx, http.MethodPost, "/admin/v1/restaurants", map[string]any{"restaurantId": id, "name": name, "timeZone": tz, "dayStartHour": dayStart,
			"currency": currency, "country": country, "registeredName": regName, "businessId": businessID, "organizationIds": []string(orgs)})
		if err != nil {
			return err
		}
		return a.print(d)
	case "memberships create":
		body := map[string]any{"userId": user, "role": role, "restaurantId": nil, "organizationId": nil}
		if restaurant != "" {
			body["restaurantId"] = restaurant
		}
		if org != "" {
			body["organizationId"] = org
		}
		d, err := a.do(ctx, http.MethodPost, "/admin/v1/memberships", body)
		if err != nil {
			return err
		}
		return a.print(d)
	case "grants list":
		q := url.Values{}
		if clientID != "" {
			q.Set("clientId", clientID)
		}
		if userID != "" {
			q.Set("userId", userID)
		}
		d, err := a.do(ctx, http.MethodGet, "/admin/v1/grants?"+q.Encode(), nil)
		if err != nil || asJSON {
			return a.printOr(d, err)
		}
		type grant struct {
			GrantID, ClientID, UserID, Boundary, Status, ExpiresAt string
			Scopes                                                 []string
		}
		return table(out, d, "GRANT ID\tCLIENT\tUSER\tBOUNDARY\tSTATUS\tEXPIRES\tSCOPES", func(g grant) []string {
			return []string{g.GrantID, g.ClientID, g.UserID, g.Boundary, g.Status, g.ExpiresAt, strings.Join(g.Scopes, " ")}
		})
	case "apps list":
		q := url.Values{}
		if userID != "" {
			q.Set("userId", userID)
		}
		if restaurant != "" {
			q.Set("restaurantId", restaurant)
		}
		d, err := a.do(ctx, http.MethodGet, "/admin/v1/connected-apps?"+q.Encode(), nil)
		if err != nil || asJSON {
			return a.printOr(d, err)
		}
		type named struct{ Name string }
		type app struct {
			GrantID, ClientName, Status, CreatedAt string
			LastUsedAt                             *string
			ApprovedBy                             struct{ Email string }
			Restaurants, Organizations             []named
		}
		return table(out, d, "GRANT ID\tAPP\tSTATUS\tAPPROVED BY\tAPPROVED\tLAST USED\tCOVERS", func(g app) []string {
			var covers []string
			for _, x := range append(g.Organizations, g.Restaurants...) {
				covers = append(covers, x.Name)
			}
			last := "never"
			if g.LastUsedAt != nil {
				last = *g.LastUsedAt
			}
			return []string{g.GrantID, g.ClientName, g.Status, g.ApprovedBy.Email, g.CreatedAt, last, strings.Join(covers, ", ")}
		})
	case "grants revoke":
		gid, err := one()
		if err != nil {
			return err
		}
		d, err := a.do(ctx, http.MethodPost, "/admin/v1/grants/"+gid+"/revoke", nil)
		if err != nil {
			return err
		}
		return a.print(d)
	case "users sign-out":
		uid, err := one()
		if err != nil {
			return err
		}
		d, err := a.do(ctx, http.MethodDelete, "/admin/v1/users/"+uid+"/sessions", nil)
		if err != nil {
			return err
		}
		return a.print(d)
	case "keys rotate":
		d, err := a.do(ctx, http.MethodPost, "/admin/v1/keys/rotate", nil)
		if err != nil {
			return err
		}
		return a.print(d)
	}
	return fmt.Errorf("unknown command %q\n\n%s", cmd, usage)
}

func token(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	var o flow.Options
	var orgs list
	var asJSON bool
	fs.StringVar(&o.BaseURL, "base-url", local(8080), "public base URL of identity or the gateway")
	fs.StringVar(&o.Email, "email", "", "demo user's email")
	secretVar(fs, &o.Password, "password", "DEMO_PASSWORD", "demo user's password")
	fs.StringVar(&o.ClientID, "client-id", "", "partner client id")
	secretVar(fs, &o.ClientSecret, "client-secret", "CLIENT_SECRET", "secret of a confidential client")
	fs.StringVar(&o.RedirectURI, "redirect-uri", local(8976)+"/callback", "registered redirect URI")
	fs.StringVar(&o.Scope, "scope", "", "space-separated scopes (default: the server's default scope)")
	fs.StringVar(&o.Restaurant, "restaurant", "", "approve this restaurant")
	fs.Var(&orgs, "organization", "approve this organization (repeat)")
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	if pos, err := parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return fmt.Errorf("%s takes only flags, not %q", fs.Name(), pos)
	}
	o.Organizations = orgs
	if o.Email == "" || o.Password == "" || o.ClientID == "" {
		return errors.New("token needs --email, --password and --client-id")
	}
	res, err := flow.Authorize(ctx, o)
	if err != nil {
		return err
	}
	tok, err := flow.Exchange(ctx, o, res)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(out).Encode(tok) //nolint:gosec // printing the tokens is what this command is for
	}
	fmt.Fprintf(out, "access_token:  %s\nrefresh_token: %s\nexpires_in:    %d s (at %s)\nscope:         %s\n", tok.AccessToken, tok.RefreshToken, tok.ExpiresIn, tok.ExpiresAt, tok.Scope)
	return nil
}

// authorize plays the owner's browser, so a partner's own OAuth library can
// be tried end to end from a script: the library builds the URL and reads
// the redirect this prints.
func authorize(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("authorize", flag.ContinueOnError)
	var o flow.Options
	var orgs list
	var authorizationURL string
	fs.StringVar(&authorizationURL, "url", "", "authorization URL the partner's application built")
	fs.StringVar(&o.Email, "email", "", "demo user's email")
	secretVar(fs, &o.Password, "password", "DEMO_PASSWORD", "demo user's password")
	fs.StringVar(&o.Restaurant, "restaurant", "", "approve this restaurant")
	fs.Var(&orgs, "organization", "approve this organization (repeat)")
	fs.BoolVar(&o.Deny, "deny", false, "deny instead of approving")
	if pos, err := parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return fmt.Errorf("%s takes only flags, not %q", fs.Name(), pos)
	}
	o.Organizations = orgs
	if authorizationURL == "" || o.Email == "" || o.Password == "" {
		return errors.New("authorize needs --url, --email and --password")
	}
	back, err := flow.Follow(ctx, o, authorizationURL)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, back)
	return nil
}
