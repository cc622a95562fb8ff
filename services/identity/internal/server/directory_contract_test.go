package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"testing"

	"partnerapi.dev/services/contracts"
)

// TestSeedDirectoryDecodesStrictlyAndImports takes the seed's demo directory
// (testdata/seed-directory.json, which tools/seed holds equal to what it
// generates): every field it writes is one the contract declares, and
// identity imports it.
func TestSeedDirectoryDecodesStrictlyAndImports(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/seed-directory.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var d contracts.Directory
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("the seed writes a field the contract does not declare: %v", err)
	}
	if len(d.Users) == 0 || len(d.Restaurants) == 0 || d.Restaurants[0].DayStartHour == nil || len(d.PartnerClients) == 0 {
		t.Fatalf("seed directory: %+v", d)
	}
	e := newEnv(t)
	// The test directory signs in with the seed's demo emails too.
	if err := e.db.Gorm.Exec(`DELETE FROM users`).Error; err != nil {
		t.Fatal(err)
	}
	var out struct {
		Data    map[string]int
		Message string
	}
	if st := e.admin(t, http.MethodPost, contracts.DirectoryImportPath, json.RawMessage(raw), &out); st != http.StatusOK {
		t.Fatalf("import: %d %+v", st, out)
	}
	want := map[string]int{"users": len(d.Users), "organizations": len(d.Organizations), "restaurants": len(d.Restaurants), "memberships": len(d.Memberships), "partnerClients": len(d.PartnerClients)}
	for k, n := range want {
		if out.Data[k] != n {
			t.Errorf("imported %s: %d, want %d", k, out.Data[k], n)
		}
	}
	var users adminPage[adminUser]
	e.admin(t, http.MethodGet, "/admin/v1/users?limit=200", nil, &users)
	if len(users.Data) != len(d.Users) {
		t.Fatalf("users after import: %d", len(users.Data))
	}
}
