package server_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"partnerapi.dev/services/contracts"
)

// TestGrantViewMatchesTheContract holds identity's grant view to the type
// the gateway decodes: no field the contract lacks, none it has left out.
func TestGrantViewMatchesTheContract(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, tok := e.approve(t, e.opts("demo-partner"))
	gid := grantID(t, tok.AccessToken)
	var raw json.RawMessage
	if st := e.partner(t, "/internal/v1/grants/"+gid, gid, &raw); st != 200 {
		t.Fatalf("grant view: %d %s", st, raw)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var g contracts.Grant
	if err := dec.Decode(&g); err != nil {
		t.Fatalf("the grant view has a field the contract does not: %v\n%s", err, raw)
	}
	again, _ := json.Marshal(g)
	var sent, declared map[string]any
	_ = json.Unmarshal(raw, &sent)
	_ = json.Unmarshal(again, &declared)
	if a, b := slices.Sorted(maps.Keys(sent)), slices.Sorted(maps.Keys(declared)); !slices.Equal(a, b) {
		t.Fatalf("fields sent %v, fields in the contract %v", a, b)
	}
	if g.GrantID != gid || g.Status != "active" || g.ExpiresAt.IsZero() || len(g.Scopes) == 0 || len(g.Restaurants) != 1 || g.Restaurants[0].TimeZone == "" {
		t.Fatalf("grant view %+v", g)
	}
}
