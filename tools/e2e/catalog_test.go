package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"testing"

	"github.com/google/uuid"

	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/tools/seed"
	"partnerapi.dev/tools/system"
)

// call sends a JSON request through the gateway and checks the answer
// against the API reference.
func call(t *testing.T, s *system.Stack, method, path, token string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, s.Gateway+path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	apispec.ValidateResponse(t, method, req.URL.Path, req.URL.Query(), resp.StatusCode, resp.Header, raw)
	var out struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if out.Data == nil {
		t.Logf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, out.Data
}

// catalogImport imports the documented café menu into a new draft through
// the gateway, the catalog import service and the menus service.
func catalogImport(t *testing.T, sys *system.Stack, restaurant string) {
	partnerctl := partnerctlBinary(t)
	token := allScopesToken(t, partnerctl, sys, seed.OwnerEmail)
	base := "/v1/restaurants/" + restaurant + "/catalog-import"
	raw, err := os.ReadFile("../../services/catalogimport/testdata/cafe.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if st, caps := call(t, sys, http.MethodGet, base+"/capabilities", token, nil); st != 200 || caps["createOnly"] != true {
		t.Fatalf("capabilities: %d %v", st, caps)
	}
	target := map[string]any{"mode": "new_draft"}
	st, plan := call(t, sys, http.MethodPost, base+"/plan", token, map[string]any{"target": target, "document": doc})
	if st != 200 || plan["valid"] != true {
		t.Fatalf("plan: %d %v", st, plan)
	}
	key := uuid.NewString()
	body := map[string]any{"target": target, "document": doc, "expectedPlanHash": plan["planHash"], "idempotencyKey": key, "confirmed": true}
	st, applied := call(t, sys, http.MethodPost, base+"/apply", token, body)
	if st != 201 || applied["replayed"] != false {
		t.Fatalf("apply: %d %v", st, applied)
	}
	created, _ := json.Marshal(applied["created"])
	creates, _ := json.Marshal(plan["creates"])
	if !bytes.Equal(created, creates) {
		t.Fatalf("created %s, planned %s", created, creates)
	}
	if st, again := call(t, sys, http.MethodPost, base+"/apply", token, body); st != 201 || again["replayed"] != true {
		t.Fatalf("replay: %d %v", st, again)
	}
	menu := applied["menu"].(map[string]any)
	st, tgt := call(t, sys, http.MethodGet, base+"/targets/"+menu["menuId"].(string), token, nil)
	if st != 200 || tgt["canAddCatalogEntities"] != true || len(tgt["categories"].([]any)) != 3 {
		t.Fatalf("target: %d %v", st, tgt)
	}
	// The import never publishes: the new draft is neither POS nor online.
	if m := tgt["menu"].(map[string]any); m["isPosMenu"] != false || m["isOnlineMenu"] != false || m["itemCount"] != float64(5) {
		t.Fatalf("imported menu %v", m)
	}
	// An imported item is on the new draft only: it can be edited there, as
	// docs/api.md tells a newcomer who needs an editable draft item.
	ids, _ := applied["ids"].(map[string]any)
	items, _ := ids["menuItems"].(map[string]any)
	if len(items) == 0 {
		t.Fatalf("apply answered no menuItems ids: %v", applied["ids"])
	}
	for _, id := range items {
		itemPath := "/v1/restaurants/" + restaurant + "/menus/" + menu["menuId"].(string) + "/items/" + id.(string)
		st, draft := call(t, sys, http.MethodGet, itemPath, token, nil)
		if st != 200 || draft["canEdit"] != true {
			t.Fatalf("imported item %s: %d %v", id, st, draft)
		}
		st, edited := call(t, sys, http.MethodPatch, itemPath, token, map[string]any{"expectedVersion": draft["version"],
			"changes": map[string]any{"name": "Renamed in the draft"}, "idempotencyKey": uuid.NewString(), "confirmed": true})
		if st != 200 || edited["item"].(map[string]any)["name"] != "Renamed in the draft" {
			t.Fatalf("edit imported item %s: %d %v", id, st, edited)
		}
		break
	}
	// Without the catalog import scope, the gateway refuses.
	readOnly := scopedToken(t, partnerctl, sys, seed.OwnerEmail, []string{contracts.ScopeRestaurantRead, contracts.ScopeMenuRead})
	if st, _ := call(t, sys, http.MethodGet, base+"/capabilities", readOnly, nil); st != 403 {
		t.Fatalf("capabilities without svc.catalog.import.write: %d", st)
	}
}
