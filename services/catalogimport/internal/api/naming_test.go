package api_test

import (
	"net/http"
	"partnerapi.dev/pkg/servicetest"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// cafeB is the example document in naming set B: an item's basePriceMinor
// is its priceMinor; options and combos keep priceMinor.
func cafeB(t *testing.T) map[string]any {
	doc := cafe(t)
	for _, it := range doc["menuItems"].([]any) {
		it := it.(map[string]any)
		it["priceMinor"] = it["basePriceMinor"]
		delete(it, "basePriceMinor")
	}
	return doc
}

// A deployment serving naming set B reads and answers the catalog import in
// set B, checked against the set-B API reference.
func TestNamingSetB(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{namingB: true})
	doc := cafeB(t)
	p := planAs[planB](e, newDraft, doc)
	if !p.Valid {
		t.Fatalf("plan: %+v", p)
	}
	// The target has the set-B fields only (strict), its menu null.
	if tg := servicetest.Strict[planTargetB](t, p.Target); tg.MenuPublicID != nil {
		t.Fatalf("plan target %s", p.Target)
	}
	// The pointers name set-B fields.
	bad := cafeB(t)
	bad["menuItems"].([]any)[1].(map[string]any)["priceMinor"] = -1
	errs := planAs[planB](e, newDraft, bad).Errors
	if len(errs) != 1 || errs[0].Path != "/menuItems/1/priceMinor" {
		t.Fatalf("errors %+v", errs)
	}
	// A set-A name is an unknown field here.
	status, raw := e.do(http.MethodPost, base(helsinki)+"/plan", helsinki, planRequest{Target: newDraft, Document: cafe(t)})
	if status != http.StatusBadRequest || !strings.Contains(string(raw), "basePriceMinor") {
		t.Fatalf("set-A document: %d %s", status, raw)
	}

	status, raw = e.apply(newDraft, doc, p.PlanHash, uuid.NewString())
	if status != http.StatusCreated {
		t.Fatalf("apply: %d %s", status, raw)
	}
	a := data[appliedB](t, raw)
	menuID := a.Menu.MenuPublicID
	if menuID == "" || a.Menu.ActiveForPos || a.IDs["menuItems"]["cappuccino"] == "" {
		t.Fatalf("apply answer %s", raw)
	}
	status, raw = e.do(http.MethodGet, base(helsinki)+"/targets/"+menuID, helsinki, nil)
	if status != http.StatusOK || !strings.Contains(string(raw), `"categoryPublicId"`) {
		t.Fatalf("target: %d %s", status, raw)
	}
	coffee := a.IDs["menuCategories"]["coffee"]
	if coffee == "" {
		t.Fatalf("no coffee category in %v", a.IDs)
	}
	more := map[string]any{
		"menu":                   map[string]any{"ref": "draft"},
		"existingMenuCategories": []any{map[string]any{"ref": "coffee", "categoryPublicId": coffee}},
		"menuItems":              []any{map[string]any{"ref": "mocha", "categoryRef": "coffee", "name": "Mocha", "priceMinor": 520, "visible": true, "productType": "drink"}},
	}
	target := map[string]any{"mode": "existing_draft", "menuPublicId": menuID}
	p = planAs[planB](e, target, more)
	if tg := servicetest.Strict[planTargetB](t, p.Target); !p.Valid || tg.MenuPublicID == nil || *tg.MenuPublicID != menuID {
		t.Fatalf("plan into the draft: %+v", p)
	}
	if status, raw := e.apply(target, more, p.PlanHash, uuid.NewString()); status != http.StatusOK {
		t.Fatalf("apply into the draft: %d %s", status, raw)
	}
	if n := e.count(`SELECT count(*) FROM menus.items WHERE name = 'Mocha' AND base_price_minor = 520`); n != 1 {
		t.Fatalf("%d mochas at 5.20", n)
	}
}
