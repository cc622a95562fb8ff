package chartcheck

import (
	"path/filepath"
	"strings"
	"testing"

	"partnerapi.dev/tools/system/systemtest"
)

// TestEnvironmentsStart renders each environment and runs every process's own
// configuration loader ("<process> check-config", the rules it applies at start) in the
// environment each container gets, then checks that what one process issues or sends
// the other accepts. A value that would crash-loop a pod, or an audience changed on
// one side, fails here.
func TestEnvironmentsStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every process")
	}
	root := repoRoot(t)
	bin := systemtest.Binaries(t, root)
	for _, tc := range renderCases() {
		if len(tc.values) == 0 {
			continue // chart defaults leave secrets to the environment
		}
		t.Run(tc.name, func(t *testing.T) {
			rel := render(t, root, tc)
			configs, problems := LoadedConfigs(rel, bin)
			report(t, "process configuration", problems)
			report(t, "agreement between processes", CheckAgreement(rel, configs))
			for _, p := range tc.wantProcs {
				if _, ok := configs[p]; !ok && len(problems) == 0 {
					t.Errorf("%s: no configuration loaded for %s", tc.name, p)
				}
			}
		})
	}
}

// TestEnvironmentCheckCatchesBrokenValues breaks one dev value per case, as an operator
// might, and expects TestEnvironmentsStart's checks to name it.
func TestEnvironmentCheckCatchesBrokenValues(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every process")
	}
	root := repoRoot(t)
	bin := systemtest.Binaries(t, root)
	c, err := LoadChart(filepath.Join(root, "charts", "restaurant-partner-api"))
	if err != nil {
		t.Fatal(err)
	}
	secret := func(process, key, value string) map[string]any {
		return map[string]any{process: map[string]any{"secret": map[string]any{"values": map[string]any{key: value}}}}
	}
	for _, tc := range []struct {
		name        string
		values      map[string]any
		wantProblem string
	}{
		{"admin token too short", secret("identity", "ADMIN_TOKEN", "dev-admin-token"), "ADMIN_TOKEN must be at least 16 characters"},
		{"a service without the events token", secret("orders", "EVENTS_TOKEN", ""), "EVENTS_TOKEN must be at least 16 characters"},
		{"a service with another events token", secret("menus", "EVENTS_TOKEN", "another-events-token-0123"), "menus sends events with an EVENTS_TOKEN the events service does not accept"},
		{"audience changed on identity's side", map[string]any{"identity": map[string]any{"config": map[string]any{"TOKEN_AUDIENCE": "http://localhost:8080"}}}, "access token audience"},
		{"audience changed on the gateway's side", map[string]any{"gateway": map[string]any{"config": map[string]any{"TOKEN_AUDIENCE": "http://localhost:8080"}}}, "access token audience"},
		{"signing key encryption key of 16 bytes", secret("identity", "SIGNING_KEY_ENCRYPTION_KEY", "MDEyMzQ1Njc4OWFiY2RlZg=="), "SIGNING_KEY_ENCRYPTION_KEY must decode to 32 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals, err := ReadValueFiles(filepath.Join(root, "deploy/dev/values.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			rel, err := Render(c, mergeMaps(vals, tc.values), "rpa", "partner-api")
			if err != nil {
				t.Fatal(err)
			}
			configs, problems := LoadedConfigs(rel, bin)
			problems = append(problems, CheckAgreement(rel, configs)...)
			if !strings.Contains(strings.Join(problems, "\n"), tc.wantProblem) {
				t.Errorf("want a problem containing %q, got:\n  %s", tc.wantProblem, strings.Join(problems, "\n  "))
			}
		})
	}
}
