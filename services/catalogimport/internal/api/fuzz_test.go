package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"partnerapi.dev/pkg/servicetest"
)

// FuzzWriteBodies sends catalog-import plan and apply, against a real
// database and the real menus service, with arbitrary text in one string
// of a valid body or an arbitrary body (servicetest.FuzzWriteBodies): never a
// 5xx, always the envelope, no internals, no quoted input. make fuzz runs
// it.
func FuzzWriteBodies(f *testing.F) {
	e := newEnv(f, options{})
	writes := importWrites(e)
	servicetest.FuzzWriteBodies(f, writes, func(t *testing.T, method, path string, body []byte) (int, []byte) {
		e.t = t
		return e.do(method, path, helsinki, string(body))
	})
}

// importWrites are plan and apply of the documented example into a new
// draft, with valid bodies.
func importWrites(e *env) []servicetest.Write {
	plan, err := json.Marshal(planRequest{Target: newDraft, Document: cafe(e.t)})
	if err != nil {
		e.t.Fatal(err)
	}
	apply, err := json.Marshal(applyRequest{Target: newDraft, Document: cafe(e.t),
		ExpectedPlanHash: e.plan(newDraft, cafe(e.t)).PlanHash, IdempotencyKey: "{KEY}", Confirmed: true})
	if err != nil {
		e.t.Fatal(err)
	}
	return []servicetest.Write{
		{Method: http.MethodPost, Path: base(helsinki) + "/plan", Body: string(plan)},
		{Method: http.MethodPost, Path: base(helsinki) + "/apply", Body: string(apply)},
	}
}

// TestWrongTypesAreNamed: a value of the wrong JSON type anywhere in a
// plan or apply body is a 400 naming its path as the body spells it.
func TestWrongTypesAreNamed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nowhere(t))
	servicetest.CheckWrongTypes(t, importWrites(e), func(t *testing.T, method, path string, body []byte) (int, []byte) {
		return e.do(method, path, helsinki, string(body))
	})
}
