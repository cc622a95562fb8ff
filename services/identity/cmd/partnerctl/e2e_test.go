package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/testenv"
	idconfig "partnerapi.dev/services/identity/internal/config"
	"partnerapi.dev/services/identity/internal/server"
	"partnerapi.dev/services/identity/migrations"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestAgainstRunningIdentity drives every partnerctl command against a real
// identity process on real Postgres, ending with the token flow.
func TestAgainstRunningIdentity(t *testing.T) {
	ctx := context.Background()
	url := testenv.NewDatabase(t, "identity", database.MigrateURL("identity", migrations.FS, migrations.Go()...))
	db, err := database.Open(ctx, database.Config{URL: config.Secret(url)}, "identity")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	var cfg idconfig.Config
	if err := config.LoadMap(ctx, &cfg, map[string]string{
		"DATABASE_URL": url, "PUBLIC_BASE_URL": base, "ADMIN_TOKEN": "ctl-admin-token-0123456789",
		"INTERNAL_CONTEXT_KEYS":      "k1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32)),
		"SIGNING_KEY_ENCRYPTION_KEY": base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 32)),
	}); err != nil {
		t.Fatal(err)
	}
	parts, err := server.Build(ctx, cfg, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	adminLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	adminBase := "http://" + adminLn.Addr().String()
	go func() { _ = parts.App.Listener(ln) }()
	go func() { _ = parts.Internal.Listener(adminLn) }()
	defer func() { _ = parts.App.ShutdownWithTimeout(5 * time.Second) }()
	defer func() { _ = parts.Internal.ShutdownWithTimeout(5 * time.Second) }()
	t.Setenv("ADMIN_TOKEN", "ctl-admin-token-0123456789")

	ctl := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		if args[0] != "token" {
			// Last, after any id: flags go anywhere.
			args = append(args, "--url", adminBase)
		}
		if err := run(ctx, args, &out); err != nil {
			t.Fatalf("partnerctl %s: %v", strings.Join(args, " "), err)
		}
		return out.String()
	}
	field := func(js, key string) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(js), &m); err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		s, _ := m[key].(string)
		return s
	}

	ctl("clients", "register", "--client-id", "demo-partner", "--name", "Demo Partner", "--redirect-uri", "http://127.0.0.1:8976/callback", "--scope", "svc.restaurant.read svc.organization.read")
	if out := ctl("clients", "list"); !strings.Contains(out, "demo-partner") || !strings.Contains(out, "pending") {
		t.Fatalf("list: %s", out)
	}
	ctl("clients", "approve", "demo-partner")
	org := field(ctl("organizations", "create", "--name", "Demo Group", "--registered-name", "Demo Group Oy", "--business-id", "1234567-8"), "organizationId")
	rest := field(ctl("restaurants", "create", "--name", "Demo Bistro", "--time-zone", "Europe/Helsinki", "--day-start-hour", "4", "--currency", "EUR", "--country", "FI",
		"--registered-name", "Demo Bistro Oy", "--business-id", "7654321-0", "--org", org), "restaurantId")
	// The old spelling of the noun still works.
	if out := ctl("orgs", "list"); !strings.Contains(out, org) {
		t.Fatalf("orgs list: %s", out)
	}
	user := field(ctl("users", "create", "--email", "owner@demo.example", "--name", "Demo Owner", "--password", "demo-password"), "userId")
	ctl("memberships", "create", "--user", user, "--restaurant", rest, "--role", "owner")
	ctl("memberships", "create", "--user", user, "--org", org, "--role", "admin")

	// Lists print aligned tables by default and JSON arrays with --json.
	for _, tc := range []struct {
		list, header string
		row          []string
		jsonKey      string
	}{
		{"organizations", "ORGANIZATION ID", []string{org, "Demo Group", "Demo Group Oy", "1234567-8"}, "organizationId"},
		{"restaurants", "RESTAURANT ID", []string{rest, "Demo Bistro", "Europe/Helsinki", "04:00", "EUR", "FI", org}, "restaurantId"},
		{"users", "USER ID", []string{user, "owner@demo.example", "Demo Owner"}, "userId"},
		{"memberships", "USER ID", []string{user, "owner", rest, "-"}, "userId"},
		{"clients", "CLIENT ID", []string{"demo-partner", "Demo Partner", "public", "approved"}, "clientId"},
	} {
		lines := strings.Split(strings.TrimSpace(ctl(tc.list, "list")), "\n")
		if !strings.HasPrefix(lines[0], tc.header) || len(lines) < 2 {
			t.Fatalf("%s list: %q", tc.list, lines)
		}
		// The second column starts at the same offset in every line.
		second := func(line, first string) int {
			return len(line) - len(strings.TrimLeft(strings.TrimPrefix(line, first), " "))
		}
		at := second(lines[0], tc.header)
		for _, l := range lines[1:] {
			if second(l, strings.Fields(l)[0]) != at {
				t.Fatalf("%s list: columns not aligned: %q", tc.list, lines)
			}
		}
		if !strings.Contains(strings.Join(strings.Fields(lines[1]), " "), strings.Join(strings.Fields(strings.Join(tc.row, " ")), " ")) {
			t.Fatalf("%s list: first row %q, want %q", tc.list, lines[1], tc.row)
		}
		var rows []map[string]any
		out := ctl(tc.list, "list", "--json")
		if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != len(lines)-1 || rows[0][tc.jsonKey] != tc.row[0] {
			t.Fatalf("%s list --json: %v %s", tc.list, err, out)
		}
		for _, r := range rows {
			if _, ok := r["passwordHash"]; ok {
				t.Fatalf("%s list shows a password hash: %s", tc.list, out)
			}
		}
	}

	out := ctl("token", "--base-url", base, "--email", "owner@demo.example", "--password", "demo-password", "--client-id", "demo-partner", "--json")
	var tok struct {
		AccessToken  string  `json:"access_token"`
		RefreshToken string  `json:"refresh_token"`
		ExpiresIn    *int    `json:"expires_in"`
		ExpiresAt    *string `json:"expires_at"`
	}
	if err := json.Unmarshal([]byte(out), &tok); err != nil {
		t.Fatalf("token output: %v %s", err, out)
	}
	if strings.Count(tok.AccessToken, ".") != 2 {
		t.Fatalf("access token is not a JWT: %s", out)
	}
	if tok.RefreshToken == "" || tok.ExpiresIn == nil || tok.ExpiresAt == nil {
		t.Fatalf("token output: %s", out)
	}
	ctl("token", "--base-url", base, "--email", "owner@demo.example", "--password", "demo-password", "--client-id", "demo-partner", "--organization", org, "--scope", "svc.restaurant.read svc.organization.read")

	grants := ctl("grants", "list", "--client-id", "demo-partner")
	if !strings.Contains(grants, "restaurant") || !strings.Contains(grants, "organization") {
		t.Fatalf("grants: %s", grants)
	}
	gid := strings.Fields(strings.Split(grants, "\n")[1])[0]
	var gs []struct {
		GrantID string `json:"grantId"`
	}
	if err := json.Unmarshal([]byte(ctl("grants", "list", "--client-id", "demo-partner", "--json")), &gs); err != nil || len(gs) != 2 || gs[0].GrantID != gid {
		t.Fatalf("grants list --json: %v %+v", err, gs)
	}
	// The owner's connected apps, by user and by restaurant: both grants.
	for _, by := range [][]string{{"--user-id", user}, {"--restaurant-id", rest}} {
		apps := ctl(append([]string{"apps", "list"}, by...)...)
		if !strings.HasPrefix(apps, "GRANT ID") || strings.Count(apps, "Demo Partner") != 2 || !strings.Contains(apps, "Demo Bistro") || !strings.Contains(apps, "owner@demo.example") {
			t.Fatalf("apps list %v:\n%s", by, apps)
		}
	}
	if out := ctl("grants", "revoke", gid); field(out, "status") != "revoked" {
		t.Fatalf("revoke: %s", out)
	}
	if out := ctl("keys", "rotate"); field(out, "activeKid") == "" {
		t.Fatalf("rotate: %s", out)
	}
	ctl("clients", "suspend", "demo-partner")
	var o bytes.Buffer
	if err := run(ctx, []string{"token", "--base-url", base, "--email", "owner@demo.example", "--password", "demo-password", "--client-id", "demo-partner"}, &o); err == nil {
		t.Fatal("token for a suspended client")
	}
}
