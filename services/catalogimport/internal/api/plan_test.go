package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/catalogimport/internal/domain"
	"partnerapi.dev/services/catalogimport/internal/store"
)

// nowhere is a menus service address where nothing listens: these tests
// need no menus service, or check what happens without one.
func nowhere(t testing.TB) options { return options{menusURL: "http://" + testenv.FreeAddr(t)} }

func TestCapabilities(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nowhere(t))
	status, raw := e.do(http.MethodGet, base(helsinki)+"/capabilities", helsinki, nil)
	if status != http.StatusOK {
		t.Fatalf("%d %s", status, raw)
	}
	golden(t, "capabilities.json", raw)

	lowered := domain.Settings{Limits: domain.ContractLimits}
	lowered.Limits.MenuItems = 40
	e = newEnv(t, options{settings: &lowered, menusURL: e.menusURL})
	_, raw = e.do(http.MethodGet, base(helsinki)+"/capabilities?organization_id=0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2aff", helsinki, nil)
	if d := data[capabilities](t, raw); d.CombosEnabled || d.Limits.MenuItems != 40 {
		t.Fatalf("configured capabilities: %s", raw)
	}
	if status, raw := e.do(http.MethodGet, base(helsinki)+"/capabilities?verbose=1", helsinki, nil); status != http.StatusBadRequest {
		t.Fatalf("unknown query parameter: %d %s", status, raw)
	}
}

func TestOutsideTheGrant(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nowhere(t))
	for _, tc := range []struct{ method, path, tenant string }{
		{http.MethodGet, base(helsinki) + "/capabilities", other},
		{http.MethodPost, base(helsinki) + "/plan", other},
		{http.MethodPost, base(helsinki) + "/apply", other},
		{http.MethodGet, base(helsinki) + "/targets/not-a-uuid", helsinki},
	} {
		if status, raw := e.do(tc.method, tc.path, tc.tenant, map[string]any{}); status != http.StatusNotFound {
			t.Errorf("%s %s as %s: %d %s", tc.method, tc.path, tc.tenant, status, raw)
		}
	}
	if status, _ := e.do(http.MethodGet, base(helsinki)+"/capabilities", "", nil); status != http.StatusUnauthorized {
		t.Errorf("without the gateway's context: %d", status)
	}
}

func TestPlanTheExampleIntoANewDraft(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nowhere(t))
	body := planRequest{Target: newDraft, Document: cafe(t)}
	status, raw := e.do(http.MethodPost, base(helsinki)+"/plan", helsinki, body)
	if status != http.StatusOK {
		t.Fatalf("%d %s", status, raw)
	}
	golden(t, "plan-cafe.json", raw)
	// Planning writes nothing, and the same input plans to the same hash.
	_, again := e.do(http.MethodPost, base(helsinki)+"/plan", helsinki, body)
	if data[planAnswer](t, again).PlanHash != data[planAnswer](t, raw).PlanHash {
		t.Fatal("the same plan hashed differently")
	}
	var n int64
	if err := e.db.Gorm.Raw(`SELECT (SELECT count(*) FROM applied_imports) + (SELECT count(*) FROM idempotency_keys) + (SELECT count(*) FROM pending_batches)`).Scan(&n).Error; err != nil || n != 0 {
		t.Fatalf("a plan wrote %d rows (%v)", n, err)
	}
}

func TestPlanWithProblemsAnswersEveryError(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nowhere(t))
	doc := cafe(t)
	items := doc["menuItems"].([]any)
	items[3].(map[string]any)["categoryRef"] = "cakes"
	items[1].(map[string]any)["basePriceMinor"] = 1_000_000_001
	items[0].(map[string]any)["name"] = strings.Repeat("ö", 201)
	status, raw := e.do(http.MethodPost, base(helsinki)+"/plan", helsinki, planRequest{Target: newDraft, Document: doc})
	if status != http.StatusOK {
		t.Fatalf("%d %s", status, raw)
	}
	golden(t, "plan-errors.json", raw)
}

func TestRequestsThatAreNotPlans(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nowhere(t))
	doc := cafe(t)
	for name, body := range map[string]any{
		"malformed JSON":              `{"target": {"mode": "new_draft"}, "document": `,
		"unknown field":               map[string]any{"target": map[string]any{"mode": "new_draft"}, "document": doc, "idempotencyKey": "5d8f0a6e-2b1c-4c3d-9e8f-0a1b2c3d4e5f"},
		"unknown field in a document": map[string]any{"target": map[string]any{"mode": "new_draft"}, "document": map[string]any{"menu": map[string]any{"ref": "m", "name": "M"}, "drinks": []any{}}},
		"missing document":            map[string]any{"target": map[string]any{"mode": "new_draft"}},
		"missing target":              map[string]any{"document": doc},
		"unknown mode":                map[string]any{"target": map[string]any{"mode": "replace"}, "document": doc},
		"existing draft without menu": map[string]any{"target": map[string]any{"mode": "existing_draft"}, "document": doc},
		"wrong type":                  map[string]any{"target": map[string]any{"mode": "new_draft"}, "document": map[string]any{"menuItems": "none"}},
	} {
		status, raw := e.do(http.MethodPost, base(helsinki)+"/plan", helsinki, body)
		if status != http.StatusBadRequest || !strings.Contains(string(raw), `"invalid_request"`) {
			t.Errorf("%s: %d %s", name, status, raw)
		}
	}
}

// Without the menus service nothing that needs it works, and nothing is
// written: a plan or apply into an existing draft is a disabled capability,
// reading a target an unavailable service.
func TestMenusUnreachable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nowhere(t))
	menu := "6a0c0e2e-0000-4000-8000-000000000001"
	status, raw := e.do(http.MethodPost, base(helsinki)+"/plan", helsinki, planRequest{Target: existingDraft(menu), Document: cafe(t)})
	if status != http.StatusServiceUnavailable || !strings.Contains(string(raw), "capability_disabled") {
		t.Errorf("plan: %d %s", status, raw)
	}
	status, raw = e.do(http.MethodGet, base(helsinki)+"/targets/"+menu, helsinki, nil)
	if status != http.StatusServiceUnavailable || !strings.Contains(string(raw), "service_unavailable") {
		t.Errorf("target: %d %s", status, raw)
	}
	_, planned := e.do(http.MethodPost, base(helsinki)+"/plan", helsinki, planRequest{Target: newDraft, Document: cafe(t)})
	status, raw = e.apply(newDraft, cafe(t), data[planAnswer](t, planned).PlanHash, "5d8f0a6e-2b1c-4c3d-9e8f-0a1b2c3d4e5f")
	if status != http.StatusServiceUnavailable || !strings.Contains(string(raw), "capability_disabled") {
		t.Errorf("apply: %d %s", status, raw)
	}
	var n int64
	if err := e.db.Gorm.Raw(`SELECT (SELECT count(*) FROM applied_imports) + (SELECT count(*) FROM idempotency_keys)`).Scan(&n).Error; err != nil || n != 0 {
		t.Fatalf("a failed apply kept %d rows (%v)", n, err)
	}
}

func TestApplyRefusesUnconfirmedOrMalformed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nowhere(t))
	good := func() map[string]any {
		return map[string]any{"target": map[string]any{"mode": "new_draft"}, "document": cafe(t),
			"expectedPlanHash": strings.Repeat("a", 64), "idempotencyKey": "5d8f0a6e-2b1c-4c3d-9e8f-0a1b2c3d4e5f", "confirmed": true}
	}
	for name, change := range map[string]func(map[string]any){
		"not confirmed":       func(b map[string]any) { b["confirmed"] = false },
		"confirmed missing":   func(b map[string]any) { delete(b, "confirmed") },
		"key not a uuid":      func(b map[string]any) { b["idempotencyKey"] = "key-1" },
		"hash malformed":      func(b map[string]any) { b["expectedPlanHash"] = "abc" },
		"document missing":    func(b map[string]any) { delete(b, "document") },
		"unknown target mode": func(b map[string]any) { b["target"] = map[string]any{"mode": "merge"} },
	} {
		b := good()
		change(b)
		if status, raw := e.do(http.MethodPost, base(helsinki)+"/apply", helsinki, b); status != http.StatusBadRequest {
			t.Errorf("%s: %d %s", name, status, raw)
		}
	}
}

// With this service's database unreachable, apply answers 503
// capability_disabled and reveals nothing; capabilities and plans, which do
// not read it, still answer.
func TestDatabaseUnavailable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nowhere(t))
	ctx := context.Background()
	db, err := database.Open(ctx, database.Config{URL: config.Secret("postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")}, "catalogimport")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	h := *e.h
	h.Imports = &store.Store{DB: db.Gorm}
	e.app = h.App(nil)
	p := e.plan(newDraft, cafe(t))
	status, raw := e.apply(newDraft, cafe(t), p.PlanHash, "5d8f0a6e-2b1c-4c3d-9e8f-0a1b2c3d4e5f")
	if status != http.StatusServiceUnavailable || !strings.Contains(string(raw), "capability_disabled") || strings.Contains(string(raw), "127.0.0.1") {
		t.Fatalf("apply: %d %s", status, raw)
	}
	if status, _ := e.do(http.MethodGet, base(helsinki)+"/capabilities", helsinki, nil); status != http.StatusOK {
		t.Fatalf("capabilities: %d", status)
	}
}

// TestTextThatIsNotUTF8WithoutNULIsNeverAValidPlan: a NUL or invalid UTF-8
// in any string of the document makes plan and apply a 400 naming the
// field, so a plan never says valid for what apply refuses (Postgres
// refuses NUL in text).
func TestTextThatIsNotUTF8WithoutNULIsNeverAValidPlan(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nowhere(t))
	var paths []string
	var strs func(v any, path string)
	strs = func(v any, path string) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				strs(e, path+"."+k)
			}
		case []any:
			for i, e := range v {
				strs(e, fmt.Sprintf("%s[%d]", path, i))
			}
		case string:
			paths = append(paths, path)
		}
	}
	strs(cafe(t), "document")
	if len(paths) < 11 {
		t.Fatalf("the example has only %d strings", len(paths))
	}
	for _, p := range paths {
		for _, bad := range []string{`\u0000`, "\xff"} {
			d := cafe(t)
			setAt(d, strings.TrimPrefix(p, "document."), "x{BAD}")
			doc, _ := json.Marshal(planRequest{Target: newDraft, Document: d})
			body := strings.Replace(string(doc), "x{BAD}", "x"+bad, 1)
			status, raw := e.do(http.MethodPost, base(helsinki)+"/plan", helsinki, body)
			if status != http.StatusBadRequest || !strings.Contains(string(raw), p+" is not valid text") {
				t.Errorf("plan with %q at %s: %d %s", bad, p, status, raw)
			}
			applied := strings.Replace(body, `"target"`, `"idempotencyKey":"5d8f0a6e-2b1c-4c3d-9e8f-0a1b2c3d4e5f","confirmed":true,"expectedPlanHash":"x","target"`, 1)
			if status, raw := e.do(http.MethodPost, base(helsinki)+"/apply", helsinki, applied); status != http.StatusBadRequest {
				t.Errorf("apply with %q at %s: %d %s", bad, p, status, raw)
			}
		}
	}
	// Naming set B reads the body another way first: the same rule holds.
	eB := newEnv(t, options{menusURL: e.menusURL, namingB: true})
	doc, _ := json.Marshal(planRequest{Target: newDraft, Document: cafe(t)})
	body := strings.Replace(string(doc), `"name":"`, "\"name\":\"\xff", 1)
	if status, raw := eB.do(http.MethodPost, base(helsinki)+"/plan", helsinki, body); status != http.StatusBadRequest || !strings.Contains(string(raw), "is not valid text") {
		t.Errorf("set B plan with invalid UTF-8: %d %s", status, raw)
	}
}

// setAt sets the value at a path like menuItems[2].name in v.
func setAt(v any, path string, value any) {
	parts := strings.FieldsFunc(path, func(r rune) bool { return r == '.' || r == '[' || r == ']' })
	for i, part := range parts {
		last := i == len(parts)-1
		switch c := v.(type) {
		case map[string]any:
			if last {
				c[part] = value
				return
			}
			v = c[part]
		case []any:
			n, _ := strconv.Atoi(part)
			if last {
				c[n] = value
				return
			}
			v = c[n]
		}
	}
}
